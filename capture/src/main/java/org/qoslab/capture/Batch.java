package org.qoslab.capture;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.qoslab.common.Json;

/**
 * {@code classify} over many files in one JVM: folders are expanded (recursively, files ending in
 * {@link #EXTENSIONS}, sorted), each file gets its own summary, one JSON line per file goes to
 * stdout as it finishes (the progress the Python CLI shows), and a combined table
 * ({@code combined.json}, {@code combined.csv}) goes to the output folder. One input file keeps
 * the single-file layout ({@code OUT/summary.json}); several get {@code OUT/NNNN-NAME/}. A file
 * that cannot be read is an error row, never the end of the batch.
 */
final class Batch {
    static final List<String> EXTENSIONS = List.of(".pcap", ".pcapng", ".cap", ".pcap0", ".ntar", ".dmp");
    static final String EXTENSIONS_TEXT = "*.pcap, *.pcapng, *.cap, *.pcap0, *.ntar, *.dmp";

    private final Main.Common c;
    private final List<Path> inputs;

    Batch(Main.Common c, List<Path> inputs) {
        this.c = c;
        this.inputs = inputs;
    }

    /** Inputs with folders expanded; a missing path stays in the list (it becomes an error row). */
    static List<Path> expand(List<Path> inputs) throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path p : inputs) {
            if (Files.isDirectory(p)) {
                try (Stream<Path> s = Files.walk(p)) {
                    s.filter(Files::isRegularFile).filter(f -> {
                        String n = f.getFileName().toString().toLowerCase(Locale.ROOT);
                        return EXTENSIONS.stream().anyMatch(n::endsWith);
                    }).sorted().forEach(out::add);
                }
            } else {
                out.add(p);
            }
        }
        return out;
    }

    /** @return 0 all read, 1 some files failed, 2 every file failed (or none found) */
    int run() throws IOException {
        List<Path> files = expand(inputs);
        boolean single = files.size() == 1 && inputs.size() == 1 && !Files.isDirectory(inputs.get(0));
        if (files.isEmpty()) {
            Main.log("error: no capture files in " + inputs + " (folders: " + EXTENSIONS_TEXT + ")");
            return 2;
        }
        List<Map<String, Object>> rows = new ArrayList<>();
        long t0 = System.nanoTime(), packets = 0;
        int failed = 0;
        for (int i = 0; i < files.size(); i++) {
            Path f = files.get(i);
            Path dir = single ? c.out : c.out.resolve(String.format("%04d-%s", i + 1, safe(f.getFileName().toString())));
            Map<String, Object> row = one(f, dir);
            if (row.get("error") != null) failed++;
            else packets += (Long) row.get("packets");
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("event", "file");
            line.put("index", i + 1);
            line.put("of", files.size());
            line.putAll(row);
            System.out.println(Json.write(line));
            System.out.flush();
            rows.add(row);
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        if (!single) writeCombined(rows);
        Map<String, Object> done = new LinkedHashMap<>();
        done.put("event", "done");
        done.put("files", files.size());
        done.put("failed", failed);
        done.put("packets", packets);
        done.put("seconds", secs);
        done.put("combined", single ? null : c.out.resolve("combined.json").toString());
        System.out.println(Json.write(done));
        return failed == 0 ? 0 : failed == files.size() ? 2 : 1;
    }

    static String safe(String name) {
        return name.replaceAll("[^A-Za-z0-9._-]", "_");
    }

    /** Classify one file into {@code dir}: a row for the combined table (error set when it failed). */
    Map<String, Object> one(Path f, Path dir) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("file", f.toString());
        row.put("summary", null);
        row.put("error", null);
        long t0 = System.nanoTime();
        try (PrintWriter pp = c.perPacketWriter(dir); PrintWriter cw = c.callsWriter(dir)) {
            Summary s = c.summary(pp, cw);
            PcapFileReader.Result r = PcapFileReader.read(f, s);
            double secs = (System.nanoTime() - t0) / 1e9;
            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put("source", f.toString());
            extra.put("format", r.format);
            extra.put("mode", c.rmiMode);
            extra.put("skipped_records", r.skipped);
            extra.put("truncated", r.truncated);
            extra.put("problem", r.problem);
            extra.put("drops", null);
            extra.put("classify_seconds", secs);
            extra.put("calls_file", cw == null ? null : dir.resolve("calls.jsonl").toString());
            s.write(dir, extra, c.window);
            if (r.truncated) Main.log("warning: " + f + ": " + r.problem + " (read " + r.packets + " packets before it)");
            List<String> warnings = s.warnings();
            for (String w : warnings) Main.log("warning: " + f + ": " + w);
            row.put("summary", dir.resolve("summary.json").toString());
            row.put("format", r.format);
            row.put("packets", r.packets);
            row.put("seconds", secs);
            Map<String, Object> cls = new LinkedHashMap<>();
            for (TrafficClass tc : TrafficClass.values()) cls.put(tc.label, s.packetsOf(tc));
            row.put("classes", cls);
            @SuppressWarnings("unchecked")
            Map<String, Object> und = (Map<String, Object>) s.toMap(Map.of()).get("undecodable");
            row.put("undecodable", und.get("packets"));
            row.put("truncated", r.truncated);
            row.put("warnings", warnings.size() + (r.truncated ? 1 : 0));
        } catch (CaptureFormatException e) {
            row.put("error", e.getMessage());
        } catch (CallLimitException e) {
            row.put("error", f + ": " + e.getMessage());
        } catch (IOException e) {
            row.put("error", "cannot write " + dir + ": " + e.getMessage());
        } catch (RuntimeException e) { // a bug must not end a batch of 500 files: name it and go on
            row.put("error", f + ": internal error " + e);
        }
        if (row.get("error") != null) Main.log("error: " + row.get("error"));
        row.putIfAbsent("seconds", (System.nanoTime() - t0) / 1e9);
        return row;
    }

    private void writeCombined(List<Map<String, Object>> rows) throws IOException {
        Files.createDirectories(c.out);
        Files.writeString(c.out.resolve("combined.json"), Json.write(Map.of("files", rows)) + "\n");
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(c.out.resolve("combined.csv")))) {
            List<String> head = new ArrayList<>(List.of("file", "format", "packets"));
            for (TrafficClass tc : TrafficClass.values()) head.add(tc.label);
            head.addAll(List.of("undecodable", "truncated", "warnings", "seconds", "error"));
            w.println(String.join(",", head));
            for (Map<String, Object> r : rows) {
                List<String> v = new ArrayList<>(List.of(csv(r.get("file")), csv(r.get("format")), csv(r.get("packets"))));
                @SuppressWarnings("unchecked")
                Map<String, Object> cls = (Map<String, Object>) r.get("classes");
                for (TrafficClass tc : TrafficClass.values()) v.add(cls == null ? "" : csv(cls.get(tc.label)));
                for (String k : List.of("undecodable", "truncated", "warnings", "seconds", "error")) v.add(csv(r.get(k)));
                w.println(String.join(",", v));
            }
        }
    }

    private static String csv(Object o) {
        if (o == null) return "";
        String s = o.toString();
        return s.contains(",") || s.contains("\"") || s.contains("\n") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }
}
