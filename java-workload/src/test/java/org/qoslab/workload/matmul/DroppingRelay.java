package org.qoslab.workload.matmul;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A lossy UDP relay in front of one worker's datagram port, like a NAT: each client (source
 * address) gets its own upstream socket, so the worker's answers and acks find their way back.
 * Every {@code dropEvery}-th packet it sees, in either direction, is dropped.
 */
final class DroppingRelay implements AutoCloseable {
    final DatagramSocket front;
    final InetSocketAddress target;
    final int dropEvery;
    final AtomicLong seen = new AtomicLong(), dropped = new AtomicLong();
    private final Map<SocketAddress, DatagramSocket> upstream = new ConcurrentHashMap<>();
    private volatile boolean closed;

    DroppingRelay(InetSocketAddress target, int dropEvery) throws IOException {
        this.target = target;
        this.dropEvery = dropEvery;
        this.front = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread t = new Thread(this::frontLoop, "relay-front");
        t.setDaemon(true);
        t.start();
    }

    int port() { return front.getLocalPort(); }

    private boolean drop() {
        if (seen.incrementAndGet() % dropEvery == 0) { dropped.incrementAndGet(); return true; }
        return false;
    }

    private void frontLoop() {
        byte[] buf = new byte[65536];
        while (!closed) {
            try {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                front.receive(p);
                SocketAddress client = p.getSocketAddress();
                DatagramSocket up = upstream.computeIfAbsent(client, this::open);
                if (drop()) continue;
                up.send(new DatagramPacket(p.getData(), p.getOffset(), p.getLength(), target));
            } catch (IOException e) {
                if (closed) return;
            }
        }
    }

    private DatagramSocket open(SocketAddress client) {
        try {
            DatagramSocket up = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            Thread t = new Thread(() -> backLoop(client, up), "relay-back");
            t.setDaemon(true);
            t.start();
            return up;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private void backLoop(SocketAddress client, DatagramSocket up) {
        byte[] buf = new byte[65536];
        while (!closed) {
            try {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                up.receive(p);
                if (drop()) continue;
                front.send(new DatagramPacket(p.getData(), p.getOffset(), p.getLength(), client));
            } catch (IOException e) {
                if (closed) return;
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        front.close();
        for (DatagramSocket s : upstream.values()) s.close();
    }
}
