package org.qoslab.capture;

import java.io.EOFException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeoutException;
import org.pcap4j.core.PcapHandle;
import org.pcap4j.core.Pcaps;
import org.pcap4j.packet.Packet;

/** The pcap4j offline paths, as peers in the benchmark (and a fallback for files the fast reader refuses). */
public final class Pcap4jReaders {
    private Pcap4jReaders() { }

    /** pcap4j raw bytes (libpcap reads, own header parsing) into {@code sink}; returns packets read. */
    public static long raw(Path file, PacketSink sink) throws Exception {
        PcapHandle h = Pcaps.openOffline(file.toString(), PcapHandle.TimestampPrecision.NANO);
        int link = h.getDlt().value();
        long n = 0;
        try {
            while (true) {
                byte[] b;
                try {
                    b = h.getNextRawPacketEx();
                } catch (EOFException e) {
                    break;
                } catch (TimeoutException e) {
                    continue;
                }
                java.sql.Timestamp t = h.getTimestamp();
                Integer orig = h.getOriginalLength();
                sink.packet(t.getTime() / 1000 * 1_000_000_000L + t.getNanos(), link, ByteBuffer.wrap(b), 0, b.length,
                        orig == null ? b.length : orig);
                n++;
            }
        } finally {
            h.close();
        }
        return n;
    }

    /** pcap4j's parsed-packet API (the static packet factory): each packet decoded into objects. */
    public static long parsed(Path file) throws Exception {
        PcapHandle h = Pcaps.openOffline(file.toString());
        long n = 0;
        try {
            while (true) {
                Packet p;
                try {
                    p = h.getNextPacketEx();
                } catch (EOFException e) {
                    break;
                } catch (TimeoutException e) {
                    continue;
                }
                if (p != null) n++;
            }
        } finally {
            h.close();
        }
        return n;
    }
}
