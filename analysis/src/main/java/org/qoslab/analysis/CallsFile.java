package org.qoslab.analysis;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.qoslab.common.Json;

/**
 * Reads call records (JSON lines, or one JSON array) into {@link CallStats.Condition}s: the I/O
 * half of the call statistics. Errors name the file and the line (JSON lines) or record number.
 */
public final class CallsFile {
    private final List<String> by;
    private final String trial, value;
    private final Map<String, String> where;
    // condition -> trial -> latencies, and {rto calls, retransmitted segments}; which counts are present
    private final Map<String, Map<String, List<Double>>> acc = new LinkedHashMap<>();
    private final Map<String, Map<String, long[]>> extra = new LinkedHashMap<>();
    private final Map<String, boolean[]> has = new LinkedHashMap<>();
    private long skipped;

    private CallsFile(List<String> by, String trial, String value, Map<String, String> where) {
        this.by = by;
        this.trial = trial;
        this.value = value;
        this.where = where;
    }

    /**
     * Read call records: {@code value} is the latency field (its unit is the records', e.g. ms),
     * {@code by} the condition fields, {@code trial} the field naming the trial (the cluster).
     * Records whose value is null or missing (incomplete calls) are skipped and counted;
     * {@code where} keeps only records whose fields equal the given text (e.g. method=render).
     *
     * @return conditions in the order first seen; {@code skipped[0]} gets the skipped count
     * @throws IOException naming the file and line or record of a record that cannot be used
     */
    public static Map<String, CallStats.Condition> read(List<Path> files, List<String> by, String trial, String value,
                                                        Map<String, String> where, long[] skipped) throws IOException {
        CallsFile r = new CallsFile(by, trial, value, where);
        for (Path f : files) {
            int n = 0;
            for (Object o : records(f)) r.add(f, ++n, o);
        }
        skipped[0] += r.skipped;
        return r.conditions();
    }

    /** The records of one file: a JSON array, or one JSON value per non-blank line. */
    static List<Object> records(Path f) throws IOException {
        List<Object> recs = new ArrayList<>();
        List<String> lines = Files.readAllLines(f);
        String all = String.join("\n", lines).trim();
        if (all.startsWith("[")) {
            recs.addAll((List<?>) parse(all, f, 1));
        } else {
            for (int n = 0; n < lines.size(); n++) {
                String line = lines.get(n).trim();
                if (!line.isEmpty()) recs.add(parse(line, f, n + 1));
            }
        }
        return recs;
    }

    private void add(Path f, int n, Object o) throws IOException {
        if (!(o instanceof Map)) throw new IOException(f + ": record " + n + " is not a JSON object");
        @SuppressWarnings("unchecked") Map<String, Object> r = (Map<String, Object>) o;
        for (Map.Entry<String, String> e : where.entrySet()) {
            if (!e.getValue().equals(String.valueOf(r.get(e.getKey())))) return;
        }
        Object val = r.get(value);
        if (val == null) { skipped++; return; }
        if (!(val instanceof Number)) throw new IOException(f + ": record " + n + ": " + value + " is not a number: " + val);
        StringBuilder name = new StringBuilder();
        for (int i = 0; i < by.size(); i++) {
            if (!r.containsKey(by.get(i))) throw new IOException(f + ": record " + n + " has no field '" + by.get(i) + "'");
            if (by.size() > 1) name.append(i > 0 ? "," : "").append(by.get(i)).append('=');
            name.append(r.get(by.get(i)));
        }
        if (!r.containsKey(trial)) throw new IOException(f + ": record " + n + " has no trial field '" + trial + "'");
        String cond = name.toString(), tr = String.valueOf(r.get(trial));
        acc.computeIfAbsent(cond, k -> new LinkedHashMap<>()).computeIfAbsent(tr, k -> new ArrayList<>())
                .add(((Number) val).doubleValue());
        long[] e = extra.computeIfAbsent(cond, k -> new LinkedHashMap<>()).computeIfAbsent(tr, k -> new long[2]);
        boolean[] h = has.computeIfAbsent(cond, k -> new boolean[2]);
        if (r.get("rto") instanceof Boolean) { h[0] = true; if ((Boolean) r.get("rto")) e[0]++; }
        if (r.get("retransmitted") instanceof Number) { h[1] = true; e[1] += ((Number) r.get("retransmitted")).longValue(); }
    }

    private Map<String, CallStats.Condition> conditions() {
        Map<String, CallStats.Condition> out = new LinkedHashMap<>();
        for (Map.Entry<String, Map<String, List<Double>>> e : acc.entrySet()) {
            CallStats.Condition c = new CallStats.Condition(e.getKey());
            for (Map.Entry<String, List<Double>> t : e.getValue().entrySet()) {
                c.trials.add(t.getKey());
                c.calls.add(t.getValue().stream().mapToDouble(Double::doubleValue).toArray());
                long[] x = extra.get(e.getKey()).get(t.getKey());
                c.rtoCalls += x[0];
                c.retransmitted += x[1];
            }
            c.hasRto = has.get(e.getKey())[0];
            c.hasRetransmitted = has.get(e.getKey())[1];
            c.pool();
            out.put(c.name, c);
        }
        return out;
    }

    private static Object parse(String text, Path f, int line) throws IOException {
        try {
            return Json.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IOException(f + ":" + line + ": " + e.getMessage());
        }
    }
}
