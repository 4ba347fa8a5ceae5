package io.dlion.aeron;

import java.util.List;

import io.aeron.ChannelUri;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Who serves which slice: the bounds, the ports and the channels of each topology, against values worked out by hand. */
class TopologyTest {
    /**
     * 300,007 parameters are 4,688 words, 24 chunks of 200 words (the last one short): 4 slices of 6 chunks, 76,800
     * parameters each, the last slice to the end; 3 slices of 8 chunks.
     */
    @Test
    void shouldCutSlicesAtWholeChunks() {
        assertArrayEquals(new long[] {0, 76_800, 153_600, 230_400, 300_007}, Topology.sliceBounds(300_007, 4, 200));
        assertArrayEquals(new long[] {0, 102_400, 204_800, 300_007}, Topology.sliceBounds(300_007, 3, 200));
        assertArrayEquals(new long[] {0, 300_007}, Topology.sliceBounds(300_007, 1, 200));
        // 25 chunks in 4 slices: floor(25 s / 4) = 6, 12, 18 chunks
        assertArrayEquals(new long[] {0, 6 * 12_800, 12 * 12_800, 18 * 12_800, 25 * 12_800 - 5}, Topology.sliceBounds(25 * 12_800 - 5, 4, 200));
    }

    @Test
    void shouldRefuseMoreSlicesThanChunks() {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> Topology.sliceBounds(203_530, 8, 1000));
        assertTrue(ex.getMessage().contains("8 slices") && ex.getMessage().contains("4 chunks"), ex.getMessage());
    }

    /**
     * The MLP's 203,530 parameters are 3,181 words: 4 chunks of 1,000, too few for 8 slices; 3,181 / 8 = 397 words, down
     * to a multiple of 20: 380 (9 chunks); for 16 slices 198, so 180 (18 chunks). The star keeps what was asked.
     */
    @Test
    void shouldShrinkTheChunksOnlyWhenTheSlicesNeedIt() {
        final List<String> eight = java.util.Collections.nCopies(8, "h");
        assertEquals(380, Topology.sharded(eight, 40_123).chunkWords(203_530, 1000));
        assertEquals(180, Topology.sharded(java.util.Collections.nCopies(16, "h"), 40_123).chunkWords(203_530, 1000));
        assertEquals(1000, Topology.sharded(List.of("a", "b", "c", "d"), 40_123).chunkWords(203_530, 1000), "4 chunks for 4 slices");
        assertEquals(1000, Topology.star("h", 1, 2).chunkWords(203_530, 1000));
        assertEquals(9, Topology.sliceBounds(203_530, 8, 380).length, "8 slices of 380-word chunks");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Topology.sharded(List.of("a", "b", "c"), 40_123).chunkWords(100, 1000))
            .getMessage().contains("3 slices"));
    }

    @Test
    void shouldGiveRankRSliceROnItsHostAndTwoPortsEach() {
        final Topology t = Topology.sharded(List.of("10.0.0.1", "10.0.0.2", "10.0.0.3"), 40_123);
        assertEquals(3, t.slices());
        assertEquals("10.0.0.3", t.host(2));
        assertEquals(40_127, t.votePort(2));
        assertEquals(40_128, t.controlPort(2));
        assertEquals(6, t.linkStreams(3), "a worker's link takes the votes for its slice and the results of every slice");
        final List<SliceEndpoint> endpoints = t.endpoints(300_007, 200, 3, "10.0.0.2");
        assertEquals(3, endpoints.size());
        assertEquals(102_400, endpoints.get(1).fromParam());
        assertEquals(204_800, endpoints.get(1).toParam());
        assertEquals(-1, endpoints.get(2).toParam(), "the last slice runs to the last parameter");
        final ChannelUri votes = ChannelUri.parse(endpoints.get(2).voteChannel());
        assertEquals("10.0.0.3:40127", votes.get("endpoint"));
        assertEquals(String.valueOf(Channels.receiverWindow(6)), votes.get("rcv-wnd"));
        assertEquals("10.0.0.2:0", ChannelUri.parse(endpoints.get(0).resultChannel()).get("endpoint"));
        assertEquals("0.0.0.0:40123", ChannelUri.parse(t.serverVoteChannel(0, 3)).get("endpoint"));
        assertEquals("0.0.0.0:40124", ChannelUri.parse(t.serverResultChannel(0, 3)).get("control"));
    }

    /** 192.0.2.0/24 is reserved for documentation (RFC 5737): no host has it. */
    @Test
    void shouldSendResultsInLocalDatagramsOnlyWhenEveryWorkerIsOnThisHost() {
        final Topology onThisHost = Topology.sharded(List.of("127.0.0.1", "localhost"), 40_123);
        assertEquals(String.valueOf(Channels.localMtu(4)), ChannelUri.parse(onThisHost.serverResultChannel(1, 2)).get("mtu"));
        assertEquals("65504", ChannelUri.parse(onThisHost.serverResultChannel(1, 2)).get("mtu"), "a 1 MiB term: the longest UDP payload");
        final Topology acrossHosts = Topology.sharded(List.of("127.0.0.1", "192.0.2.7"), 40_123);
        assertEquals(Channels.MTU, ChannelUri.parse(acrossHosts.serverResultChannel(0, 2)).get("mtu"), "one worker elsewhere");
        assertEquals("65504", ChannelUri.parse(acrossHosts.endpoints(300_007, 200, 2, "127.0.0.1").get(0).voteChannel()).get("mtu"),
            "the vote to a slice on this host");
        assertEquals(Channels.MTU, ChannelUri.parse(acrossHosts.endpoints(300_007, 200, 2, "127.0.0.1").get(1).voteChannel()).get("mtu"));
        final ChannelUri moved = ChannelUri.parse(acrossHosts.voteChannel(1, 0, 2));
        assertEquals("127.0.0.1:40125", moved.get("endpoint"), "slice 1's port on rank 0's host, after a move");
        assertEquals("65504", moved.get("mtu"));
        assertEquals(Channels.MTU, ChannelUri.parse(acrossHosts.voteChannel(0, 1, 2)).get("mtu"), "slice 0 moved to the other host");
        assertTrue(acrossHosts.isLocalHost(0));
        assertFalse(acrossHosts.isLocalHost(1));
        final Topology servers = Topology.servers(List.of("127.0.0.1"), 40_123);
        assertEquals(Channels.MTU, ChannelUri.parse(servers.serverResultChannel(0, 2)).get("mtu"), "dedicated servers: workers anywhere");
    }

    @Test
    void shouldKeepTheStarsPortsAndItsWindowsPerWorker() {
        final Topology t = Topology.star("10.0.0.1", 40_123, 40_200);
        assertEquals(1, t.slices());
        assertEquals(40_200, t.controlPort(0));
        assertEquals(8, t.linkStreams(8));
        assertEquals(Channels.udpVotes("0.0.0.0", 40_123, 8), t.serverVoteChannel(0, 8));
    }

    @Test
    void shouldRefuseDedicatedServersForAJobAnEmptyHostAndABadPort() {
        assertEquals("topology must be star or sharded, got servers",
            assertThrows(IllegalArgumentException.class, () -> Topology.checkJobKind("topology", Topology.Kind.SERVERS)).getMessage());
        assertEquals("topology", assertThrows(NullPointerException.class, () -> Topology.checkJobKind("topology", null)).getMessage());
        assertEquals(Topology.Kind.SHARDED, Topology.checkJobKind("topology", Topology.Kind.SHARDED));
        assertEquals(Topology.Kind.SERVERS, Topology.servers(List.of("a", "b"), 40_123).kind());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Topology.sharded(List.of("a", " "), 40_123)).getMessage()
            .contains("slice 1"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Topology.sharded(List.of("a", "b"), 65_534)).getMessage()
            .contains("slice 1"));
    }
}
