package org.qoslab.workload.net;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Reliable messages over UDP, the scheme of reference 000 (section 3, Fig. 3.4/3.5): a message is
 * cut into packets of at most {@link #MAX_CHUNK} (63 KB) data bytes (a message that fits in one
 * packet is sent in a packet of its own size), and the packets go <b>stop-and-wait</b>: after each
 * one the sender waits for its acknowledgement; when none comes before the timer runs out, it sends
 * a duplicate and waits again.
 *
 * <p>Differences from the paper, stated: the timer is adaptive (TCP-style smoothed RTT + 4 x its
 * variation, per destination, at least {@link #MIN_RTO_NS}, doubling on every retransmission of a
 * packet up to {@link #MAX_RTO_NS}; Karn's rule: no RTT sample from a retransmitted packet), so
 * one setting works on quiet loopback and under a flood; a sender gives up at the caller's
 * deadline. The receiver acknowledges every data packet it gets (duplicates too), reassembles
 * messages, delivers each message once (duplicates of completed messages are recognised by
 * sender address and message id) and hands it to the {@link Handler} on its receive thread.
 *
 * <p>Packet formats (big-endian): data {@code 'D', long msgId, int seq, int total, bytes};
 * ack {@code 'A', long msgId, int seq}. One endpoint (one UDP socket) both sends and receives;
 * several threads may send at once (each waits for its own acks).
 */
public final class ReliableDatagram implements Closeable {
    /** Data bytes per packet at most: 63 KB, as the paper chose below the 64 KB IP limit. */
    public static final int MAX_CHUNK = 63 * 1024;
    /** Largest message accepted (64 Mi chunks would be absurd; 1 GiB is plenty for n = 8000). */
    public static final int MAX_MESSAGE = 1 << 30;
    static final byte DATA = 'D', ACK = 'A';
    static final int HEADER = 1 + 8 + 4 + 4, ACK_LEN = 1 + 8 + 4;
    public static final long INITIAL_RTO_NS = 200_000_000L, MIN_RTO_NS = 20_000_000L, MAX_RTO_NS = 2_000_000_000L;

    /** Called once per complete message, on the receive thread: must not block (no send from here). */
    public interface Handler {
        void onMessage(InetSocketAddress from, byte[] message);
    }

    private final DatagramChannel ch;
    private final Handler handler;
    private final Thread receiver;
    private final AtomicLong nextId = new AtomicLong(new SecureRandom().nextLong() & 0x3fffffffffffffffL);
    private final ConcurrentHashMap<AckKey, CompletableFuture<Void>> waiting = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<SocketAddress, Rtt> rtt = new ConcurrentHashMap<>();
    // receive-thread state
    private final Map<MsgKey, Partial> partial = new HashMap<>();
    private final Map<MsgKey, Boolean> completed = new LinkedHashMap<>(1024, 0.75f, false) {
        @Override protected boolean removeEldestEntry(Map.Entry<MsgKey, Boolean> e) { return size() > 65536; }
    };
    private volatile boolean closed;

    /** Counters of this endpoint: data packets sent (retransmissions included), retransmissions,
     *  data packets received, duplicate data packets received, messages delivered. */
    public final LongAdder packetsSent = new LongAdder(), retransmits = new LongAdder(),
            packetsReceived = new LongAdder(), duplicates = new LongAdder(), delivered = new LongAdder();

    private record AckKey(long id, int seq) { }

    private record MsgKey(SocketAddress from, long id) { }

    private static final class Partial {
        final byte[][] chunks;
        int have, bytes;
        final long born = System.nanoTime();
        Partial(int total) { chunks = new byte[total][]; }
    }

    /** Smoothed round-trip time of one destination (RFC 6298 arithmetic). */
    private static final class Rtt {
        double srtt = -1, rttvar;

        synchronized long rto() {
            if (srtt < 0) return INITIAL_RTO_NS;
            return (long) Math.min(MAX_RTO_NS, Math.max(MIN_RTO_NS, srtt + 4 * rttvar));
        }

        synchronized void sample(long ns) {
            if (srtt < 0) { srtt = ns; rttvar = ns / 2.0; return; }
            rttvar = 0.75 * rttvar + 0.25 * Math.abs(srtt - ns);
            srtt = 0.875 * srtt + 0.125 * ns;
        }
    }

    /**
     * Bind a UDP endpoint and start its receive thread.
     *
     * @param bind address to bind (null = all), {@code port} 0 = any
     * @param dscp DSCP for every packet sent (data and acks), -1 = unmarked
     */
    public ReliableDatagram(String bind, int port, int dscp, Handler handler, String threadName) throws IOException {
        this.ch = Marked.datagram(bind, port, Marked.checkDscp(dscp));
        this.handler = handler;
        this.receiver = new Thread(this::receiveLoop, threadName);
        receiver.setDaemon(true);
        receiver.start();
    }

    public InetSocketAddress localAddress() throws IOException { return (InetSocketAddress) ch.getLocalAddress(); }

    /** The underlying channel (tests read its IP_TOS). */
    public DatagramChannel channel() { return ch; }

    /**
     * Send one message reliably; returns when every packet was acknowledged.
     *
     * @param deadlineNanos {@link System#nanoTime()} after which the send fails
     * @throws SocketTimeoutException when a packet is still unacknowledged at the deadline
     */
    public void send(InetSocketAddress to, byte[] msg, long deadlineNanos) throws IOException {
        if (msg.length > MAX_MESSAGE) throw new IOException("message of " + msg.length + " bytes is too large");
        long id = nextId.getAndIncrement();
        int total = Math.max(1, (msg.length + MAX_CHUNK - 1) / MAX_CHUNK);
        Rtt est = rtt.computeIfAbsent(to, k -> new Rtt());
        for (int seq = 0; seq < total; seq++) {
            int off = seq * MAX_CHUNK, len = Math.min(MAX_CHUNK, msg.length - off);
            ByteBuffer p = ByteBuffer.allocate(HEADER + len); // a packet of the data's own size
            p.put(DATA).putLong(id).putInt(seq).putInt(total).put(msg, off, len).flip();
            AckKey key = new AckKey(id, seq);
            CompletableFuture<Void> acked = new CompletableFuture<>();
            waiting.put(key, acked);
            try {
                long rto = est.rto();
                boolean resent = false;
                while (true) {
                    if (closed) throw new ClosedChannelException();
                    long sent = System.nanoTime();
                    p.rewind();
                    ch.send(p, to);
                    packetsSent.increment();
                    long left = deadlineNanos - sent;
                    if (left <= 0) throw timeout(to, seq, total, msg.length);
                    try {
                        acked.get(Math.min(rto, left), TimeUnit.NANOSECONDS);
                        if (!resent) est.sample(System.nanoTime() - sent);
                        break;
                    } catch (TimeoutException e) {
                        if (System.nanoTime() - deadlineNanos >= 0) throw timeout(to, seq, total, msg.length);
                        retransmits.increment();
                        resent = true;
                        rto = Math.min(MAX_RTO_NS, rto * 2);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new java.io.InterruptedIOException("interrupted while waiting for an ack from " + to);
                    } catch (ExecutionException e) {
                        throw new IOException(e.getCause());
                    }
                }
            } finally {
                waiting.remove(key);
            }
        }
    }

    private static SocketTimeoutException timeout(InetSocketAddress to, int seq, int total, int bytes) {
        return new SocketTimeoutException("no acknowledgement from " + to + " for packet " + (seq + 1) + "/" + total
                + " of a " + bytes + "-byte message before the deadline");
    }

    private void receiveLoop() {
        ByteBuffer buf = ByteBuffer.allocateDirect(65536);
        ByteBuffer ack = ByteBuffer.allocate(ACK_LEN);
        while (!closed) {
            SocketAddress from;
            try {
                buf.clear();
                from = ch.receive(buf);
            } catch (IOException e) {
                if (!closed) System.err.println("[qoslab-workload] datagram receive failed: " + e);
                return;
            }
            buf.flip();
            if (from == null || buf.remaining() < ACK_LEN) continue;
            byte type = buf.get();
            long id = buf.getLong();
            int seq = buf.getInt();
            if (type == ACK) {
                CompletableFuture<Void> f = waiting.get(new AckKey(id, seq));
                if (f != null) f.complete(null);
                continue;
            }
            if (type != DATA || buf.remaining() < 4) continue;
            int total = buf.getInt();
            if (total < 1 || seq < 0 || seq >= total || (long) total * MAX_CHUNK > MAX_MESSAGE + (long) MAX_CHUNK) continue;
            packetsReceived.increment();
            try { // acknowledge every data packet, duplicates included (their first ack may be lost)
                ack.clear();
                ack.put(ACK).putLong(id).putInt(seq).flip();
                ch.send(ack, from);
            } catch (IOException e) {
                if (closed) return;
            }
            byte[] msg = assemble(new MsgKey(from, id), total, seq, buf);
            if (msg == null) continue;
            delivered.increment();
            try {
                handler.onMessage((InetSocketAddress) from, msg);
            } catch (RuntimeException | LinkageError e) {
                // whatever one message does, the endpoint keeps receiving (a dead receive thread
                // would leave the worker deaf: no acks, no replies)
                System.err.println("[qoslab-workload] datagram handler failed: " + e);
            }
        }
    }

    /**
     * Keep packet {@code seq} of {@code total} of message {@code mk} (its payload is what remains in
     * {@code buf}); the whole message once every packet is in, else null (duplicates are counted).
     */
    private byte[] assemble(MsgKey mk, int total, int seq, ByteBuffer buf) {
        if (completed.containsKey(mk)) { duplicates.increment(); return null; }
        Partial p = partial.get(mk);
        if (p == null) {
            if (partial.size() > 1024) sweep();
            p = new Partial(total);
            partial.put(mk, p);
        }
        if (p.chunks.length != total || p.chunks[seq] != null) { duplicates.increment(); return null; }
        byte[] data = new byte[buf.remaining()];
        buf.get(data);
        p.chunks[seq] = data;
        p.have++;
        p.bytes += data.length;
        if (p.have < total) return null;
        partial.remove(mk);
        completed.put(mk, Boolean.TRUE);
        byte[] msg = new byte[p.bytes];
        int off = 0;
        for (byte[] c : p.chunks) { System.arraycopy(c, 0, msg, off, c.length); off += c.length; }
        return msg;
    }

    /** Forget partial messages older than a minute (their sender gave up). */
    private void sweep() {
        long now = System.nanoTime();
        for (Iterator<Partial> it = partial.values().iterator(); it.hasNext(); )
            if (now - it.next().born > 60_000_000_000L) it.remove();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        ch.close();
        for (CompletableFuture<Void> f : waiting.values()) f.completeExceptionally(new ClosedChannelException());
    }
}
