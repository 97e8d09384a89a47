package org.qoslab.capture;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Bounded connection table of the FLOW mode: at most {@code maxFlows} connections (least
 * recently seen evicted first) and none idle longer than the timeout. A connection is decided
 * at its first payload packet seen: RMI iff that payload starts with the JRMI magic, so a
 * capture that starts mid-connection leaves it non-RMI. IPv6 connections are keyed by a 32-bit
 * fold of their addresses (a collision can only merge two connections' RMI decision).
 */
public final class FlowTable {
    private final int max;
    private final long idleNanos;
    private final LinkedHashMap<Key, long[]> map; // value: {rmi ? 1 : 0, lastSeen}
    public long evictedIdle, evictedFull;

    record Key(long a, long b) { }

    FlowTable(int max, long idleNanos) {
        this.max = max;
        this.idleNanos = idleNanos;
        this.map = new LinkedHashMap<>(1024, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, long[]> e) {
                if (size() > FlowTable.this.max) { evictedFull++; return true; }
                return false;
            }
        };
    }

    public int size() { return map.size(); }

    boolean rmi(int src, int sport, int dst, int dport, long ts, boolean magic) {
        long ea = ((src & 0xFFFFFFFFL) << 16) | sport, eb = ((dst & 0xFFFFFFFFL) << 16) | dport;
        Key k = ea < eb ? new Key(ea, eb) : new Key(eb, ea);
        long[] v = map.get(k);
        if (v == null || ts - v[1] > idleNanos) {
            v = new long[] {magic ? 1 : 0, ts};
            map.put(k, v);
            expireIdle(ts);
        }
        v[1] = ts;
        return v[0] == 1;
    }

    private void expireIdle(long now) {
        var it = map.entrySet().iterator();
        int checked = 0;
        while (it.hasNext() && checked++ < 4) { // amortised: a few of the oldest per insertion
            if (now - it.next().getValue()[1] > idleNanos) { it.remove(); evictedIdle++; } else break;
        }
    }
}
