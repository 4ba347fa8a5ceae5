/**
 * The chaos soak ({@code ./dlion chaos}): a seeded nemesis ({@link io.dlion.testkit.chaos.ChaosSchedule}) disturbs a
 * sharded job of real worker processes with faults that may overlap ({@link io.dlion.testkit.chaos.ChaosRun}); every
 * worker logs the rounds it applies ({@link io.dlion.job.RoundHistory}) and a checker proves properties of the whole
 * history ({@link io.dlion.testkit.chaos.ChaosChecker}).
 */
package io.dlion.testkit.chaos;
