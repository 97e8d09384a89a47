package org.qoslab.capture;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What {@link GiopMatcher} and {@link NiodevMatcher} share: the table of tracked TCP connections
 * (at most {@code maxConns}, the least recently seen forgotten first: {@link #evict}), their key,
 * the following of one direction's segments by sequence number ({@link #segment}) and where
 * finished calls go ({@link #sink}). Not thread-safe.
 *
 * @param <C> a tracked connection (it receives its streams' events)
 * @param <S> one direction of a connection
 */
abstract class TcpMatcher<C, S extends TcpDirection<? super C>> {
    private final int maxConns;
    /** Tracked connections by {@link #connKey}, least recently seen first. */
    final LinkedHashMap<Long, C> conns;
    /** Where finished calls go (null: nowhere). */
    Consumer<CallMatcher.Call> sink;
    /** Counters for the summary: segments after bytes the capture did not see; segments (partly) seen before. */
    public long gaps, retransmitted;

    /** @param maxConns connections tracked at once (the oldest is forgotten first: {@link #evict}) */
    TcpMatcher(int maxConns) {
        this.maxConns = maxConns;
        this.conns = new LinkedHashMap<>(64, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, C> e) {
                if (size() <= TcpMatcher.this.maxConns) return false;
                evict(e.getValue());
                return true;
            }
        };
    }

    /** {@code c} is forgotten to make room in the table: end what is open on it. */
    abstract void evict(C c);

    /** Direction {@code s} of {@code c} missed bytes (it is {@link TcpDirection#lost} now): end what they may hold. */
    abstract void gap(C c, S s, long ts);

    /** Direction {@code s} of {@code c} holds a header its stream cannot read (it is lost now). */
    abstract void unreadable(C c, S s, long ts);

    /** The key of the TCP connection of {@code d} (IPv4), the same in both directions. */
    static long connKey(Classifier.Decoded d) {
        long ea = ((d.src & 0xFFFFFFFFL) << 16) | d.sport, eb = ((d.dst & 0xFFFFFFFFL) << 16) | d.dport;
        return Math.min(ea, eb) * 0x9E3779B97F4A7C15L ^ Math.max(ea, eb);
    }

    /**
     * The payload of segment {@code d} (in {@code b}) on direction {@code s} of {@code c}: bytes after
     * a gap lose the direction ({@link #gap}), bytes seen before are skipped, a lost or new direction
     * restarts only at a segment that {@code starts} a message; then the bytes go to the stream,
     * and a header it cannot read loses the direction ({@link #unreadable}).
     */
    final void segment(C c, S s, long ts, Classifier.Decoded d, ByteBuffer b, long frame, boolean starts) {
        int len = Math.min(d.payloadLen, d.payloadCaptured);
        if (len <= 0) return;
        int seq = d.tcpSeq, off = d.payloadOff;
        if (s.seqKnown && !s.lost) {
            int ahead = seq - s.next;
            if (ahead > 0) { // bytes the capture did not see: the stream cannot be followed
                gaps++;
                s.lost = true;
                gap(c, s, ts);
            } else if (ahead < 0) {
                int dup = Math.min(-ahead, len);
                retransmitted++;
                seq += dup; off += dup; len -= dup;
                if (len == 0) return;
            }
        }
        if (s.lost || !s.seqKnown) {
            if (!starts) return;
            s.resync(seq);
        }
        s.feed(b, off, len, ts, frame, c);
        s.next = seq + len;
        if (s.lost) unreadable(c, s, ts); // not this protocol after all, or a header this parser cannot read
    }

    /** Collects calls into a list (tests). */
    public static List<CallMatcher.Call> collect(TcpMatcher<?, ?> m) {
        List<CallMatcher.Call> out = new ArrayList<>();
        m.sink = out::add;
        return out;
    }
}
