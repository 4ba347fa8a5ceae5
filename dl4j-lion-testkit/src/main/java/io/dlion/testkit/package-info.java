/**
 * Test support shared by the modules' tests, the fault and attack runs and the examples' tests: embedded and played
 * aggregation servers ({@link io.dlion.testkit.EmbeddedServer}, {@link io.dlion.testkit.PlayedServer}), naive
 * references ({@link io.dlion.testkit.NaiveVote}, {@link io.dlion.testkit.SyntheticVotes}), hostile and lossy
 * exchanges, raw and mutated frames ({@link io.dlion.testkit.Frames}, {@link io.dlion.testkit.GarbageFrames}), child
 * JVMs started with the project's JVM flags ({@link io.dlion.testkit.ChildProcess},
 * {@link io.dlion.testkit.CliProcesses}), free ports ({@link io.dlion.testkit.TestPorts}) and the fault and attack
 * runs ({@link io.dlion.testkit.FaultRun}, {@link io.dlion.testkit.AttackRun}).
 */
package io.dlion.testkit;
