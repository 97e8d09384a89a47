package org.qoslab.capture;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.pcap4j.core.PcapDumper;
import org.pcap4j.core.PcapHandle;
import org.pcap4j.core.PcapNetworkInterface;
import org.pcap4j.core.PcapStat;
import org.pcap4j.core.Pcaps;

/**
 * Live capture with pcap4j 1.8.2 (libpcap through JNA) on one interface, classifying as packets
 * arrive; optionally keeps the raw capture ({@code --write}). Stops after a duration or when
 * {@link #stop()} is called (the CLI calls it on SIGTERM/SIGINT). Reports libpcap's counters:
 * received, dropped by the kernel buffer, dropped by the interface.
 */
public final class LiveCapture {
    private volatile boolean stop;

    public void stop() { stop = true; }

    /**
     * Capture on {@code ifname} into {@code sink} for at most {@code seconds} (<= 0: until stopped).
     *
     * @return libpcap statistics and the link type, for the summary
     * @throws Exception with a message naming the interface when it cannot be opened
     */
    public Map<String, Object> run(String ifname, int snaplen, double seconds, String writePath, PacketSink sink)
            throws Exception {
        PcapNetworkInterface nif = Pcaps.getDevByName(ifname);
        if (nif == null) throw new IllegalArgumentException("no interface " + ifname + " here");
        PcapHandle h = nif.openLive(snaplen, PcapNetworkInterface.PromiscuousMode.PROMISCUOUS, 50);
        // libpcap's read timeout does not fire on an idle TPACKET_V3 ring: poll non-blocking instead,
        // so a quiet port still honours --duration and SIGTERM
        h.setBlockingMode(PcapHandle.BlockingMode.NONBLOCKING);
        PcapDumper dump = writePath != null ? h.dumpOpen(writePath) : null;
        int link = h.getDlt().value();
        long deadline = seconds > 0 ? System.nanoTime() + (long) (seconds * 1e9) : Long.MAX_VALUE;
        try {
            while (!stop && System.nanoTime() < deadline) {
                byte[] raw;
                try {
                    raw = h.getNextRawPacketEx();
                } catch (TimeoutException e) {
                    Thread.sleep(1);
                    continue;
                }
                java.sql.Timestamp t = h.getTimestamp();
                long ts = t.getTime() / 1000 * 1_000_000_000L + t.getNanos();
                Integer orig = h.getOriginalLength();
                sink.packet(ts, link, ByteBuffer.wrap(raw), 0, raw.length, orig == null ? raw.length : orig);
                if (dump != null) dump.dumpRaw(raw, t);
            }
            PcapStat st = h.getStats();
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("interface", ifname);
            out.put("link_type", link);
            out.put("pcap_received", st.getNumPacketsReceived());
            out.put("pcap_dropped", st.getNumPacketsDropped());
            out.put("pcap_dropped_by_interface", st.getNumPacketsDroppedByIf());
            return out;
        } finally {
            if (dump != null) dump.close();
            h.close();
        }
    }
}
