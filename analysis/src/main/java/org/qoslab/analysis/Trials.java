package org.qoslab.analysis;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Trial rows read from CSV: condition name -> trial times (seconds), in file order. */
public final class Trials {
    private Trials() { }

    /**
     * Read {@code file}: the value column {@code value}, grouped by the columns {@code by} (the
     * condition name is "col=val,col=val", or the value itself for one column). Empty values are
     * skipped (a missing trial). {@code filter} keeps only rows whose "col=val" pairs all match.
     *
     * @throws IOException naming the file and line for a missing column or a value that is not a number
     */
    public static Map<String, double[]> read(Path file, List<String> by, String value, Map<String, String> filter)
            throws IOException {
        List<String> lines = Files.readAllLines(file);
        if (lines.isEmpty()) throw new IOException(file + ": empty file");
        List<String> head = Arrays.asList(lines.get(0).trim().split(","));
        int vi = head.indexOf(value);
        if (vi < 0) throw new IOException(file + ":1: no column '" + value + "' (columns: " + head + ")");
        int[] gi = new int[by.size()];
        for (int i = 0; i < by.size(); i++) {
            gi[i] = head.indexOf(by.get(i));
            if (gi[i] < 0) throw new IOException(file + ":1: no column '" + by.get(i) + "' (columns: " + head + ")");
        }
        Map<String, List<Double>> acc = new LinkedHashMap<>();
        for (int n = 1; n < lines.size(); n++) {
            String line = lines.get(n).trim();
            if (line.isEmpty()) continue;
            String[] f = line.split(",", -1);
            if (f.length != head.size()) throw new IOException(file + ":" + (n + 1) + ": " + f.length + " fields, header has " + head.size());
            boolean keep = true;
            for (Map.Entry<String, String> e : filter.entrySet()) keep &= f[head.indexOf(e.getKey())].equals(e.getValue());
            if (!keep || f[vi].isEmpty()) continue;
            double v;
            try {
                v = Double.parseDouble(f[vi]);
            } catch (NumberFormatException e) {
                throw new IOException(file + ":" + (n + 1) + ": " + value + " is not a number: '" + f[vi] + "'");
            }
            StringBuilder name = new StringBuilder();
            for (int i = 0; i < gi.length; i++) {
                if (gi.length > 1) name.append(i > 0 ? "," : "").append(by.get(i)).append('=');
                name.append(f[gi[i]]);
            }
            acc.computeIfAbsent(name.toString(), k -> new ArrayList<>()).add(v);
        }
        Map<String, double[]> out = new LinkedHashMap<>();
        acc.forEach((k, v) -> out.put(k, v.stream().mapToDouble(Double::doubleValue).toArray()));
        return out;
    }
}
