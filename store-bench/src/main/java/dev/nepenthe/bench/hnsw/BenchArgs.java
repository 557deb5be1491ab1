package dev.nepenthe.bench.hnsw;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** {@code name=value} command-line arguments with defaults and clear errors. */
public final class BenchArgs {
    private final Map<String, String> values = new HashMap<>();

    public BenchArgs(String[] args, String usage) {
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(
                        "argument '" + a + "': expected name=value\nusage: " + usage);
            }
            values.put(a.substring(0, eq).replaceFirst("^--", ""), a.substring(eq + 1));
        }
    }

    /**
     * Refuses a name the harness does not read (a typo would otherwise run with the default,
     * silently).
     */
    public void onlyKnown(Set<String> names) {
        for (String given : values.keySet()) {
            if (!names.contains(given)) {
                throw new IllegalArgumentException(
                        "argument '" + given + "': expected one of " + new TreeSet<>(names));
            }
        }
    }

    public int i(String name, int dflt) {
        String v = values.get(name);
        try {
            return v == null ? dflt : Integer.parseInt(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": expected an integer, got '" + v + "'");
        }
    }

    public double d(String name, double dflt) {
        String v = values.get(name);
        try {
            return v == null ? dflt : Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": expected a number, got '" + v + "'");
        }
    }

    public String s(String name, String dflt) {
        return values.getOrDefault(name, dflt);
    }

    /** The file or folder the argument names, or null when it is not given (or empty). */
    public Path path(String name) {
        String v = values.get(name);
        return v == null || v.isEmpty() ? null : Path.of(v);
    }

    public int[] ints(String name, int[] dflt) {
        String v = values.get(name);
        return v == null
                ? dflt
                : Arrays.stream(v.split(",")).mapToInt(x -> Integer.parseInt(x.trim())).toArray();
    }

    public double[] doubles(String name, double[] dflt) {
        String v = values.get(name);
        return v == null
                ? dflt
                : Arrays.stream(v.split(","))
                        .mapToDouble(x -> Double.parseDouble(x.trim()))
                        .toArray();
    }
}
