package org.qoslab.capture;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.qoslab.common.Json;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code qoslab-capture}: classify offline captures, capture live, benchmark the readers. */
@Command(name = "qoslab-capture", mixinStandardHelpOptions = true, version = "qoslab-capture 0.1.0",
        description = "pcap4j capture and the thesis's traffic classes (control/ack, ssh, rmi, short-frame, data, udp, other).",
        subcommands = {Main.ClassifyCmd.class, Main.LiveCmd.class, Main.BenchCmd.class})
public final class Main implements Runnable {
    @Override public void run() { CommandLine.usage(this, System.err); }

    public static void main(String[] args) {
        System.exit(new CommandLine(new Main()).execute(args));
    }

    static void log(String m) { System.err.println("[qoslab-capture] " + m); }

    /** Options shared by classify and live. */
    static class Common {
        @Option(names = "--host", description = "Host address that directions (in/out) are relative to.")
        String host;
        @Option(names = "--rmi-mode", defaultValue = "flow", description = "flow | ethereal (default ${DEFAULT-VALUE}).")
        String rmiMode;
        @Option(names = "--bin", defaultValue = "1.0", description = "Time-series bin, seconds.")
        double bin;
        @Option(names = "--window", defaultValue = "10", description = "Running-average window, bins.")
        int window;
        @Option(names = "--out", required = true, description = "Folder for summary.json and timeseries.csv.")
        Path out;
        @Option(names = "--per-packet", description = "Also write packets.csv.")
        boolean perPacket;
        @Option(names = "--max-flows", defaultValue = "100000", description = "Connection table cap (LRU).")
        int maxFlows;
        @Option(names = "--idle-timeout", defaultValue = "300", description = "Connection idle timeout, seconds.")
        double idle;
        @Option(names = "--tunnel", defaultValue = "inner",
                description = "inner | outer: classify tunnelled packets (IP-in-IP, GRE, ERSPAN) by the inner or the outer header (default ${DEFAULT-VALUE}).")
        String tunnel;
        @Option(names = "--calls",
                description = "Also write calls.jsonl beside summary.json: one JSON line per JRMP or GIOP call or MPJ message round trip (capture/README.md, JRMP calls, GIOP calls, MPJ messages).")
        boolean calls;
        @Option(names = "--call-quiet", defaultValue = "1.0",
                description = "Seconds: a call whose reply is under way when the capture ends is complete only if the client "
                        + "acknowledged all of it and nothing followed for this long (default ${DEFAULT-VALUE}).")
        double callQuiet;
        @Option(names = "--max-open-calls", defaultValue = "" + CallLimitException.DEFAULT_MAX_OPEN,
                description = "GIOP requests (and MPJ messages) waiting for their replies at once, at most; one more "
                        + "ends the file with an error (a pathological stream must not fill the heap; default ${DEFAULT-VALUE}).")
        int maxOpenCalls;
        @Option(names = "--max-gap", defaultValue = "3600",
                description = "Seconds: packets further than this from the capture's main range are time outliers (left out of the series).")
        double maxGap;

        Classifier classifier() {
            TrafficClass.RmiMode m;
            switch (rmiMode) {
                case "flow": m = TrafficClass.RmiMode.FLOW; break;
                case "ethereal": m = TrafficClass.RmiMode.ETHEREAL; break;
                default: throw new IllegalArgumentException("--rmi-mode must be flow or ethereal, got " + rmiMode);
            }
            if (maxFlows < 1 || maxOpenCalls < 1) throw new IllegalArgumentException("--max-flows and --max-open-calls must be >= 1");
            if (!(bin > 0) || window < 1) throw new IllegalArgumentException("--bin must be > 0 and --window >= 1");
            if (!(maxGap > 0)) throw new IllegalArgumentException("--max-gap must be > 0");
            if (!(callQuiet >= 0)) throw new IllegalArgumentException("--call-quiet must be >= 0");
            Classifier.Tunnel t;
            switch (tunnel) {
                case "inner": t = Classifier.Tunnel.INNER; break;
                case "outer": t = Classifier.Tunnel.OUTER; break;
                default: throw new IllegalArgumentException("--tunnel must be inner or outer, got " + tunnel);
            }
            return new Classifier(m, maxFlows, (long) (idle * 1e9), t);
        }

        Summary summary(PrintWriter pp) {
            return summary(pp, null);
        }

        /** A summary whose JRMP call matcher writes one JSON line per call to {@code callsOut} (null: counts only). */
        Summary summary(PrintWriter pp, PrintWriter callsOut) {
            CallMatcher m = new CallMatcher(maxFlows, (long) (idle * 1e9), (long) (callQuiet * 1e9));
            GiopMatcher g = new GiopMatcher(maxFlows, maxOpenCalls);
            NiodevMatcher n = new NiodevMatcher(maxFlows, maxOpenCalls);
            if (callsOut != null) {
                m.sink(call -> callsOut.append(Json.write(call.toMap())).append('\n'));
                g.sink(call -> callsOut.append(Json.write(call.toMap())).append('\n'));
                n.sink(call -> callsOut.append(Json.write(call.toMap())).append('\n'));
            }
            return new Summary(classifier(), host, bin, maxGap, pp).calls(m).giop(g).mpj(n);
        }

        /** calls.jsonl in {@code dir} when --calls is given, else null. */
        PrintWriter callsWriter(Path dir) throws java.io.IOException {
            if (!calls) return null;
            Files.createDirectories(dir);
            return new PrintWriter(Files.newBufferedWriter(dir.resolve("calls.jsonl")), false);
        }

        PrintWriter perPacketWriter() throws java.io.IOException {
            return perPacketWriter(out);
        }

        PrintWriter perPacketWriter(Path dir) throws java.io.IOException {
            if (!perPacket) return null;
            Files.createDirectories(dir);
            return new PrintWriter(Files.newBufferedWriter(dir.resolve("packets.csv")), false);
        }
    }

    @Command(name = "classify", mixinStandardHelpOptions = true,
            description = "Classify pcap/pcapng files (and folders of them) in one JVM: one summary per file, "
                    + "a combined table, one JSON line per file on stdout as it finishes.")
    static final class ClassifyCmd implements Callable<Integer> {
        @Parameters(arity = "1..*", description = "Capture files or folders (folders: " + Batch.EXTENSIONS_TEXT + ", recursively).")
        List<Path> inputs;
        @CommandLine.Mixin Common c;

        @Override
        public Integer call() {
            try {
                c.classifier(); // options checked once, before any file
                return new Batch(c, inputs).run();
            } catch (IllegalArgumentException e) {
                log("error: " + e.getMessage());
                return 2;
            } catch (java.io.IOException e) {
                log("error: cannot write " + c.out + ": " + e.getMessage());
                return 2;
            }
        }
    }

    @Command(name = "live", mixinStandardHelpOptions = true,
            description = "Capture on an interface until --duration or SIGTERM, then write the summary (with drop counts).")
    static final class LiveCmd implements Callable<Integer> {
        @Option(names = "--interface", required = true) String ifname;
        @Option(names = "--duration", defaultValue = "0", description = "Seconds; 0 = until SIGTERM/SIGINT.") double duration;
        @Option(names = "--snaplen", defaultValue = "65535") int snaplen;
        @Option(names = "--write", description = "Also keep the raw capture in this pcap file.") Path write;
        @Option(names = "--engine", defaultValue = "dumpcap",
                description = "dumpcap (C capture to a file, classified when it stops) | pcap4j (in this JVM). Default ${DEFAULT-VALUE}.")
        String engine;
        @Option(names = "--buffer-mb", defaultValue = "64", description = "Kernel capture buffer, MiB (default ${DEFAULT-VALUE}).")
        int bufferMb;
        @Option(names = "--immediate", description = "pcap4j: immediate mode (no batching in ring blocks).") boolean immediate;
        @Option(names = "--writer-queue", defaultValue = "0",
                description = "pcap4j: classify on a second thread through a queue of this many packets (0: inline).")
        int writerQueue;
        @CommandLine.Mixin Common c;

        @Override
        public Integer call() {
            LiveCapture lc = new LiveCapture();
            java.util.concurrent.CountDownLatch written = new java.util.concurrent.CountDownLatch(1);
            // SIGTERM/SIGINT: stop capturing, let the summary be written, then let the JVM go
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                lc.stop();
                try { written.await(60, java.util.concurrent.TimeUnit.SECONDS); } catch (InterruptedException ignored) { }
            }));
            try (PrintWriter pp = c.perPacketWriter(); PrintWriter cw = c.callsWriter(c.out)) {
                LiveCapture.Options o = new LiveCapture.Options();
                o.ifname = ifname;
                o.seconds = duration;
                o.snaplen = snaplen;
                o.write = write;
                o.bufferMb = bufferMb;
                o.immediate = immediate;
                o.writerQueue = writerQueue;
                switch (engine) {
                    case "dumpcap": o.engine = LiveCapture.Engine.DUMPCAP; break;
                    case "pcap4j": o.engine = LiveCapture.Engine.PCAP4J; break;
                    default: throw new IllegalArgumentException("--engine must be dumpcap or pcap4j, got " + engine);
                }
                if (bufferMb < 1 || snaplen < 1 || writerQueue < 0) {
                    throw new IllegalArgumentException("--buffer-mb and --snaplen must be >= 1, --writer-queue >= 0");
                }
                Summary s = c.summary(pp, cw);
                Map<String, Object> st = lc.run(o, s, () -> log("capturing on " + c.host + " interface " + ifname
                        + " (" + engine + ", " + bufferMb + " MiB buffer)"));
                Map<String, Object> extra = new LinkedHashMap<>();
                extra.put("source", "live:" + ifname);
                extra.put("format", "live");
                extra.put("mode", c.rmiMode);
                extra.put("drops", st);
                extra.put("written", write == null ? null : write.toString());
                extra.put("calls_file", cw == null ? null : c.out.resolve("calls.jsonl").toString());
                s.write(c.out, extra, c.window);
                log("done: " + s.total() + " packets, dropped " + st.get("dropped_total") + " (kernel "
                        + st.get("dropped_kernel") + ", interface " + st.get("dropped_interface") + ", own " + st.get("dropped_own") + ")");
                return 0;
            } catch (IllegalArgumentException e) {
                log("error: " + e.getMessage());
                return 2;
            } catch (Exception e) {
                log("error: capture on " + ifname + " failed: " + e.getMessage());
                return 2;
            } finally {
                written.countDown();
            }
        }
    }

    @Command(name = "bench", mixinStandardHelpOptions = true,
            description = "Classify a file with a given reader and print packets/s (JSON).")
    static final class BenchCmd implements Callable<Integer> {
        @Parameters(index = "0") Path file;
        @Option(names = "--reader", defaultValue = "fast", description = "fast | pcap4j-raw | pcap4j-parsed") String reader;
        @Option(names = "--passes", defaultValue = "1",
                description = "fast reader: classify the file this many times in this JVM; the first pass is the "
                        + "cold (end-to-end) rate, the best later pass the warm (steady-state, JIT-compiled) rate.")
        int passes;

        @Override
        public Integer call() throws Exception {
            if (reader.equals("fast") && passes > 1) {
                double warm = 0;
                Map<String, Object> first = null;
                for (int i = 0; i < passes; i++) {
                    Summary s = new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100_000, 300_000_000_000L), null, 1.0, null);
                    long t0 = System.nanoTime();
                    long n = PcapFileReader.read(file, s).packets;
                    double secs = (System.nanoTime() - t0) / 1e9;
                    if (i == 0) {
                        first = new LinkedHashMap<>();
                        first.put("reader", reader);
                        first.put("packets", n);
                        first.put("seconds", secs);
                        first.put("packets_per_s", n / secs);
                        Map<String, Object> counts = new LinkedHashMap<>();
                        for (TrafficClass c : TrafficClass.values()) counts.put(c.label, s.packetsOf(c));
                        first.put("classes", counts);
                        // after the timing: evidence that call matching ran in the timed pass (calls still
                        // open at the file's end are not closed here, so these are the calls closed mid-file)
                        first.put("calls", s.calls().toMap());
                    } else {
                        warm = Math.max(warm, n / secs);
                    }
                }
                first.put("warm_packets_per_s", warm);
                first.put("passes", passes);
                System.out.println(Json.write(first));
                return 0;
            }
            Classifier cl = new Classifier(TrafficClass.RmiMode.FLOW, 100_000, 300_000_000_000L);
            Summary s = new Summary(cl, null, 1.0, null);
            long t0 = System.nanoTime(), n;
            switch (reader) {
                case "fast": n = PcapFileReader.read(file, s).packets; break;
                case "pcap4j-raw": n = Pcap4jReaders.raw(file, s); break;
                case "pcap4j-parsed": n = Pcap4jReaders.parsed(file); break;
                default: log("error: --reader must be fast, pcap4j-raw or pcap4j-parsed"); return 2;
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("reader", reader);
            out.put("packets", n);
            out.put("seconds", secs);
            out.put("packets_per_s", n / secs);
            if (reader.equals("pcap4j-parsed")) {
                // decoding into pcap4j objects only, no classification: an upper bound on that path's rate
                out.put("classes", null);
                out.put("note", "parse only, not classified");
            } else {
                Map<String, Object> counts = new LinkedHashMap<>();
                for (TrafficClass c : TrafficClass.values()) counts.put(c.label, s.packetsOf(c));
                out.put("classes", counts);
            }
            System.out.println(Json.write(out));
            return 0;
        }
    }
}
