package org.qoslab.capture;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.pcap4j.core.PcapDumper;
import org.pcap4j.core.PcapHandle;
import org.pcap4j.core.PcapNetworkInterface;
import org.pcap4j.core.PcapStat;

/**
 * Live capture on one interface, with every drop accounted. Two engines:
 * <ul>
 * <li>{@link Engine#DUMPCAP} (default): Wireshark's {@code dumpcap} (C, libpcap, its own
 * kernel buffer {@code -B}) writes a pcap file; when the capture stops the fast reader
 * ({@link PcapFileReader}) classifies it. The capture path is C end to end, so a descheduled JVM
 * cannot make the kernel ring overflow. Drops come from dumpcap's own final statistics.</li>
 * <li>{@link Engine#PCAP4J}: pcap4j 1.8.2 (libpcap through JNA) in this JVM, classifying as packets
 * arrive, optionally through a bounded queue to a second thread ({@code writerThread}; a full
 * queue is an own drop, counted). Drops from libpcap's {@code pcap_stats}.</li>
 * </ul>
 * The {@code drops} block of the summary (see capture/README.md) has the same fields for both:
 * received, captured, dropped_kernel, dropped_interface, dropped_own, dropped_total, lossless,
 * plus the interface's own rx counters over the capture.
 */
public final class LiveCapture {
    /** Which program reads the packets from the kernel. */
    public enum Engine { DUMPCAP, PCAP4J }

    /** Capture settings; the defaults are the measured lossless choice (capture/README.md). */
    public static final class Options {
        public String ifname;
        public Engine engine = Engine.DUMPCAP;
        /** Bytes kept per packet. */
        public int snaplen = 65535;
        /** Seconds; <= 0: until {@link #stop()}. */
        public double seconds;
        /** Keep the raw capture here (pcap); dumpcap writes to a temporary file otherwise. */
        public Path write;
        /** Kernel capture buffer, MiB (libpcap's default is 2). */
        public int bufferMb = 64;
        /** pcap4j: deliver packets as they arrive (no batching in TPACKET_V3 blocks). */
        public boolean immediate;
        /** pcap4j: classify on a second thread fed by a bounded queue of this many packets (0: inline). */
        public int writerQueue;
    }

    private volatile boolean stop;

    /** Ask a running capture to stop (from another thread or a shutdown hook). */
    public void stop() { stop = true; }

    private boolean running(long deadline) { return !stop && System.nanoTime() < deadline; }

    /**
     * Capture per {@code o} into {@code sink}; {@code ready} runs once the capture is open.
     *
     * @return the drops block for the summary
     * @throws IllegalArgumentException for an unknown interface; Exception naming the interface
     *         when it cannot be opened
     */
    public Map<String, Object> run(Options o, PacketSink sink, Runnable ready) throws Exception {
        if (!Files.exists(Path.of("/sys/class/net", o.ifname))) {
            throw new IllegalArgumentException("no interface " + o.ifname + " here");
        }
        long[] if0 = ifCounters(o.ifname);
        Map<String, Object> out = o.engine == Engine.DUMPCAP ? dumpcap(o, sink, ready) : pcap4j(o, sink, ready);
        long[] if1 = ifCounters(o.ifname);
        out.put("interface_rx_packets", if1[0] - if0[0]);
        out.put("interface_rx_dropped", if1[1] - if0[1]);
        long total = (Long) out.get("dropped_kernel") + (Long) out.get("dropped_interface") + (Long) out.get("dropped_own");
        out.put("dropped_total", total);
        out.put("lossless", total == 0);
        return out;
    }

    /** {rx_packets, rx_dropped} of an interface from sysfs (0, 0 when unreadable). */
    static long[] ifCounters(String ifname) {
        long[] v = new long[2];
        String[] names = {"rx_packets", "rx_dropped"};
        for (int i = 0; i < 2; i++) {
            try {
                v[i] = Long.parseLong(Files.readString(Path.of("/sys/class/net", ifname, "statistics", names[i])).trim());
            } catch (IOException | NumberFormatException e) {
                v[i] = 0;
            }
        }
        return v;
    }

    private static Map<String, Object> base(Options o, String engine) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("engine", engine);
        out.put("interface", o.ifname);
        out.put("snaplen", o.snaplen);
        out.put("buffer_mb", o.bufferMb);
        return out;
    }

    // ------------------------------------------------------------------------------------ dumpcap
    /** dumpcap's closing line: received/dropped (pcap:K/dumpcap:D/flushed:F/ps_ifdrop:I). */
    static final Pattern DUMPCAP_STATS = Pattern.compile(
            "received/dropped on interface '.*': (\\d+)/(\\d+) \\(pcap:(\\d+)/dumpcap:(\\d+)/flushed:(\\d+)/ps_ifdrop:(\\d+)\\)");

    private Map<String, Object> dumpcap(Options o, PacketSink sink, Runnable ready) throws Exception {
        Path file = o.write != null ? o.write : Files.createTempFile("qoslab-live-", ".pcapng");
        // pcapng (not -P): dumpcap closes the file with an Interface Statistics Block, the counters travel with it
        List<String> argv = List.of("dumpcap", "-q", "-i", o.ifname, "-s", Integer.toString(o.snaplen), "-B",
                Integer.toString(o.bufferMb), "-w", file.toString());
        Process p;
        try {
            p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        } catch (IOException e) {
            if (o.write == null) Files.deleteIfExists(file);
            throw new IOException("cannot start dumpcap (Debian package tshark): " + e.getMessage());
        }
        List<String> lines = new ArrayList<>();
        Thread drain = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) synchronized (lines) { lines.add(l); lines.notifyAll(); }
            } catch (IOException ignored) { }
        }, "dumpcap-output");
        drain.setDaemon(true);
        drain.start();
        long deadline = o.seconds > 0 ? System.nanoTime() + (long) (o.seconds * 1e9) : Long.MAX_VALUE;
        boolean started = false;
        try {
            waitFor(lines, p, "Capturing on", 15_000);
            ready.run();
            started = true;
            while (running(deadline) && p.isAlive()) Thread.sleep(20);
        } finally {
            if (!started && o.write == null) Files.deleteIfExists(file);
            // a SIGTERM to our process group has reached dumpcap too: a second one can cut its report short
            if (stop && p.isAlive()) p.waitFor(3, TimeUnit.SECONDS);
            if (p.isAlive()) p.destroy(); // SIGTERM: dumpcap drains what it has, writes its statistics and exits
            if (!p.waitFor(20, TimeUnit.SECONDS)) p.destroyForcibly();
            drain.join(5000);
        }
        String all;
        synchronized (lines) { all = String.join("\n", lines); }
        PcapFileReader.Result r;
        try {
            r = PcapFileReader.read(file, sink);
        } finally {
            if (o.write == null) Files.deleteIfExists(file);
        }
        Map<String, Object> out = dumpcapCounters(o, all, r, p);
        out.put("file_truncated", r.truncated);
        return out;
    }

    /** The drops block from dumpcap's closing line, else from the statistics block it wrote; an error naming the interface if neither. */
    private Map<String, Object> dumpcapCounters(Options o, String all, PcapFileReader.Result r, Process p) throws IOException {
        Map<String, Object> out = base(o, "dumpcap");
        Matcher m = DUMPCAP_STATS.matcher(all);
        if (m.find()) { // dumpcap's closing line: the most detail
            out.put("received", Long.parseLong(m.group(1)));
            out.put("captured", r.packets);
            out.put("dropped_kernel", Long.parseLong(m.group(3)));
            out.put("dropped_interface", Long.parseLong(m.group(6)));
            out.put("dropped_own", Long.parseLong(m.group(4)) + Long.parseLong(m.group(5)));
            out.put("counters_from", "dumpcap report");
        } else if (r.isbIfRecv >= 0 && r.isbIfDrop >= 0) { // else the statistics block it wrote into the file
            out.put("received", r.isbIfRecv);
            out.put("captured", r.packets);
            out.put("dropped_kernel", r.isbIfDrop);
            out.put("dropped_interface", 0L);
            out.put("dropped_own", Math.max(0, r.isbIfRecv - r.isbIfDrop - r.packets));
            out.put("counters_from", "pcapng interface statistics block");
        } else {
            throw new IOException("dumpcap on " + o.ifname + " gave no statistics (exit " + p.exitValue() + "): " + tail(all));
        }
        return out;
    }

    private static void waitFor(List<String> lines, Process p, String what, long ms) throws Exception {
        long end = System.currentTimeMillis() + ms;
        synchronized (lines) {
            while (lines.stream().noneMatch(l -> l.contains(what))) {
                if (!p.isAlive() || System.currentTimeMillis() > end) {
                    throw new IOException("dumpcap did not start: " + tail(String.join("\n", lines)));
                }
                lines.wait(50);
            }
        }
    }

    private static String tail(String s) {
        String t = s.strip();
        return t.isEmpty() ? "no output" : t.substring(Math.max(0, t.length() - 300)).replace('\n', ' ');
    }

    // ------------------------------------------------------------------------------------ pcap4j
    private record Raw(long ts, int orig, byte[] data, java.sql.Timestamp t) { }

    private Map<String, Object> pcap4j(Options o, PacketSink sink, Runnable ready) throws Exception {
        PcapHandle h = new PcapHandle.Builder(o.ifname).snaplen(o.snaplen)
                .promiscuousMode(PcapNetworkInterface.PromiscuousMode.PROMISCUOUS).timeoutMillis(50)
                .bufferSize(o.bufferMb << 20).immediateMode(o.immediate).build();
        // libpcap's read timeout does not fire on an idle TPACKET_V3 ring: poll non-blocking instead,
        // so a quiet port still honours the duration and SIGTERM
        h.setBlockingMode(PcapHandle.BlockingMode.NONBLOCKING);
        PcapDumper dump = o.write != null ? h.dumpOpen(o.write.toString()) : null;
        int link = h.getDlt().value();
        long deadline = o.seconds > 0 ? System.nanoTime() + (long) (o.seconds * 1e9) : Long.MAX_VALUE;
        long[] own = {0}, captured = {0};
        ArrayBlockingQueue<Raw> q = o.writerQueue > 0 ? new ArrayBlockingQueue<>(o.writerQueue) : null;
        Raw end = new Raw(0, 0, new byte[0], null);
        Thread writer = null;
        if (q != null) {
            writer = new Thread(() -> {
                try {
                    for (Raw r; (r = q.take()) != end; ) deliver(r, link, sink, dump, captured);
                } catch (InterruptedException ignored) { }
            }, "capture-writer");
            writer.start();
        }
        try {
            ready.run();
            while (running(deadline)) {
                byte[] raw;
                try {
                    raw = h.getNextRawPacketEx();
                } catch (TimeoutException e) {
                    Thread.sleep(1);
                    continue;
                }
                java.sql.Timestamp t = h.getTimestamp();
                Integer orig = h.getOriginalLength();
                Raw r = new Raw(t.getTime() / 1000 * 1_000_000_000L + t.getNanos(), orig == null ? raw.length : orig, raw, t);
                if (q == null) deliver(r, link, sink, dump, captured);
                else if (!q.offer(r)) own[0]++;
            }
            if (q != null) {
                q.put(end);
                writer.join();
            }
            PcapStat st = h.getStats();
            Map<String, Object> out = base(o, o.writerQueue > 0 ? "pcap4j+writer-thread" : "pcap4j");
            out.put("link_type", link);
            out.put("immediate", o.immediate);
            out.put("received", st.getNumPacketsReceived());
            out.put("captured", captured[0]);
            out.put("dropped_kernel", st.getNumPacketsDropped());
            out.put("dropped_interface", st.getNumPacketsDroppedByIf());
            out.put("dropped_own", own[0]);
            return out;
        } finally {
            if (writer != null) writer.interrupt();
            if (dump != null) dump.close();
            h.close();
        }
    }

    private static void deliver(Raw r, int link, PacketSink sink, PcapDumper dump, long[] captured) {
        sink.packet(r.ts, link, ByteBuffer.wrap(r.data), 0, r.data.length, r.orig);
        captured[0]++;
        if (dump != null) {
            try {
                dump.dumpRaw(r.data, r.t);
            } catch (org.pcap4j.core.NotOpenException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
