package org.qoslab.capture;

import java.util.LinkedHashMap;
import java.util.Map;

/** Fragmented datagrams seen (first fragment's class), bounded like the flow table. */
final class FragmentTable {
    private final long idleNanos;
    private final LinkedHashMap<FlowTable.Key, long[]> map; // value: {class ordinal, lastSeen}

    FragmentTable(int max, long idleNanos) {
        this.idleNanos = idleNanos;
        this.map = new LinkedHashMap<>(64, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<FlowTable.Key, long[]> e) { return size() > max; }
        };
    }

    private static FlowTable.Key key(Classifier.Decoded x) {
        return new FlowTable.Key(((x.src & 0xFFFFFFFFL) << 32) | (x.dst & 0xFFFFFFFFL),
                (x.fragId << 12) | ((long) x.ipVersion << 8) | (x.proto & 0xFF));
    }

    void put(Classifier.Decoded x, long ts, TrafficClass c) { map.put(key(x), new long[] {c.ordinal(), ts}); }

    TrafficClass get(Classifier.Decoded x, long ts) {
        long[] v = map.get(key(x));
        if (v == null || Math.abs(ts - v[1]) > idleNanos) return null;
        v[1] = ts;
        return TrafficClass.values()[(int) v[0]];
    }
}
