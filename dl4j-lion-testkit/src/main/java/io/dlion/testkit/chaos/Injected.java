package io.dlion.testkit.chaos;

/**
 * A fault as the nemesis carried it out.
 *
 * @param fault       the planned fault.
 * @param startWallMs when it was injected (SIGKILL, SIGSTOP, loss switched on, sprayer or stranger started), wall clock ms.
 * @param endWallMs   when it ended (the killed workers restarted, SIGCONT, loss off, sprayer or stranger stopped), wall clock
 *                    ms; -1 when the run ended first.
 */
public record Injected(Fault fault, long startWallMs, long endWallMs) {
}
