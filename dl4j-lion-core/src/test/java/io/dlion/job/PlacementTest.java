package io.dlion.job;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PlacementTest {

    @Test
    void shouldReadSlurm() {
        final Placement p = Placement.fromEnvironment(Map.of("SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_LOCALID", "1",
            "SLURM_JOB_NODELIST", "gpu[03-04]"));
        assertEquals(5, p.rank());
        assertEquals(8, p.workers());
        assertEquals(1, p.localRank());
        assertEquals("gpu03", p.serverHost());
        assertEquals(-1, p.serverPort());
        assertEquals("SLURM_PROCID", p.sources().get("rank"));
    }

    @Test
    void shouldReadTorchrun() {
        final Placement p = Placement.fromEnvironment(Map.of("RANK", "2", "WORLD_SIZE", "4", "LOCAL_RANK", "0", "MASTER_ADDR", "10.1.2.3",
            "MASTER_PORT", "29500"));
        assertEquals(2, p.rank());
        assertEquals(4, p.workers());
        assertEquals(0, p.localRank());
        assertEquals("10.1.2.3", p.serverHost());
        assertEquals(29500, p.serverPort());
    }

    @Test
    void shouldReadOpenMpiAndKubernetes() {
        final Placement mpi = Placement.fromEnvironment(Map.of("OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "6",
            "OMPI_COMM_WORLD_LOCAL_RANK", "1"));
        assertEquals(3, mpi.rank());
        assertEquals(6, mpi.workers());
        assertEquals(1, mpi.localRank());
        final Placement k8s = Placement.fromEnvironment(Map.of("JOB_COMPLETION_INDEX", "7"));
        assertEquals(7, k8s.rank());
        assertEquals(-1, k8s.workers());
        assertEquals(12, k8s.workersOr(12), "the manifest's --workers");
    }

    @Test
    void shouldLetFlagsWinAndAgreeingSourcesPass() {
        final Placement p = Placement.fromEnvironment(Map.of("SLURM_PROCID", "1", "RANK", "1", "SLURM_NTASKS", "4", "WORLD_SIZE", "4"));
        assertEquals(1, p.rankOr(null));
        assertEquals(3, p.rankOr(3));
        assertEquals("h", p.serverHostOr("h"));
    }

    @Test
    void shouldRefuseConflictingSourcesNamingBoth() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Placement.fromEnvironment(Map.of("SLURM_PROCID", "1", "RANK", "2")));
        assertTrue(e.getMessage().contains("SLURM_PROCID=1") && e.getMessage().contains("RANK=2"), e.getMessage());
        final IllegalArgumentException hosts = assertThrows(IllegalArgumentException.class,
            () -> Placement.fromEnvironment(Map.of("SLURM_JOB_NODELIST", "a[1-2]", "MASTER_ADDR", "b")));
        assertTrue(hosts.getMessage().contains("SLURM_JOB_NODELIST") && hosts.getMessage().contains("MASTER_ADDR"), hosts.getMessage());
    }

    @Test
    void shouldSayWhatWasLookedForWhenNothingIsFound() {
        final Placement none = Placement.fromEnvironment(Map.of("PATH", "/bin"));
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> none.rankOr(null));
        assertTrue(e.getMessage().startsWith("--worker-id is not given") && e.getMessage().contains("SLURM_PROCID")
            && e.getMessage().contains("JOB_COMPLETION_INDEX"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> none.serverHostOr(null));
        assertThrows(IllegalArgumentException.class, () -> none.workersOr(null));
    }

    @Test
    void shouldRefuseMalformedValuesNamingTheVariable() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Placement.fromEnvironment(Map.of("RANK", "x")));
        assertTrue(e.getMessage().contains("RANK"), e.getMessage());
        final IllegalArgumentException big = assertThrows(IllegalArgumentException.class,
            () -> Placement.fromEnvironment(Map.of("RANK", "4", "WORLD_SIZE", "4")));
        assertTrue(big.getMessage().contains("RANK") && big.getMessage().contains("WORLD_SIZE"), big.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {"node7;node7", "gpu[03-08,11];gpu03", "gpu[11,03-08];gpu11", "a01,b[1-2];a01",
        "cpu[5];cpu5", "x-y[009-010],z;x-y009"})
    void shouldTakeTheFirstHostOfASlurmNodeList(final String list, final String first) {
        assertEquals(first, Placement.firstHost(list));
    }

    @Test
    void shouldGiveEveryRanksHostFromSlurmsBlockDistribution() {
        // 2 tasks on each of gpu09 and gpu10, 1 on gpu11 and cpu01: ranks 0-1, 2-3, 4, 5
        assertEquals(List.of("gpu09", "gpu09", "gpu10", "gpu10", "gpu11", "cpu01"), Placement.rankHosts(Map.of(
            "SLURM_JOB_NODELIST", "gpu[09-10,11],cpu01", "SLURM_TASKS_PER_NODE", "2(x2),1(x2)"), 6));
        assertEquals(List.of("n1", "n2"), Placement.rankHosts(Map.of("SLURM_JOB_NODELIST", "n[1-2]", "SLURM_TASKS_PER_NODE", "1(x2)",
            "SLURM_DISTRIBUTION", "block"), 2));
        assertEquals(List.of("a", "b", "c"), Placement.rankHosts(Map.of(Placement.HOSTS_VARIABLE, "a, b,c", "SLURM_JOB_NODELIST", "x",
            "SLURM_TASKS_PER_NODE", "3"), 3), "the explicit list wins");
        assertEquals(null, Placement.rankHosts(Map.of("MASTER_ADDR", "h", "WORLD_SIZE", "2"), 2), "torchrun gives one host, not every rank's");
    }

    @Test
    void shouldRefuseRankHostsThatDoNotAddUp() {
        final IllegalArgumentException count = assertThrows(IllegalArgumentException.class, () -> Placement.rankHosts(Map.of(
            "SLURM_JOB_NODELIST", "n[1-2]", "SLURM_TASKS_PER_NODE", "2(x2)"), 3));
        assertTrue(count.getMessage().contains("SLURM_TASKS_PER_NODE") && count.getMessage().contains("4 ranks"), count.getMessage());
        final IllegalArgumentException nodes = assertThrows(IllegalArgumentException.class, () -> Placement.rankHosts(Map.of(
            "SLURM_JOB_NODELIST", "n[1-3]", "SLURM_TASKS_PER_NODE", "2(x2)"), 4));
        assertTrue(nodes.getMessage().contains("3 nodes"), nodes.getMessage());
        final IllegalArgumentException cyclic = assertThrows(IllegalArgumentException.class, () -> Placement.rankHosts(Map.of(
            "SLURM_JOB_NODELIST", "n[1-2]", "SLURM_TASKS_PER_NODE", "2(x2)", "SLURM_DISTRIBUTION", "cyclic"), 4));
        assertTrue(cyclic.getMessage().contains("SLURM_DISTRIBUTION") && cyclic.getMessage().contains("--hosts"), cyclic.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Placement.rankHosts(Map.of(Placement.HOSTS_VARIABLE, "a,,b"), 3));
        assertThrows(IllegalArgumentException.class, () -> Placement.rankHosts(Map.of("SLURM_JOB_NODELIST", "n[2-1]",
            "SLURM_TASKS_PER_NODE", "1"), 1));
        assertThrows(IllegalArgumentException.class, () -> Placement.rankHosts(Map.of("SLURM_JOB_NODELIST", "n1",
            "SLURM_TASKS_PER_NODE", "two"), 1));
    }
}
