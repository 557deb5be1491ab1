package dev.nepenthe.core.internal.evidence;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Deterministic JSON for signed documents: object keys sorted, no insignificant white space,
 * integers as integers. The same content always gives the same bytes, so a signature over them can
 * be checked by anyone who re-encodes nothing and just hashes what was stored.
 */
public final class CanonicalJson {
    private CanonicalJson() {}

    /** Encodes maps, lists, strings, integral numbers, booleans and null. */
    public static String encode(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value);
        return sb.toString();
    }

    private static void write(StringBuilder sb, Object v) {
        switch (v) {
            case null -> sb.append("null");
            case String s -> string(sb, s);
            case Boolean b -> sb.append(b);
            case Long l -> sb.append(l);
            case Integer i -> sb.append(i);
            case Map<?, ?> m -> {
                sb.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : new TreeMap<>(m).entrySet()) {
                    if (!first) {
                        sb.append(',');
                    }
                    first = false;
                    string(sb, (String) e.getKey());
                    sb.append(':');
                    write(sb, e.getValue());
                }
                sb.append('}');
            }
            case List<?> l -> {
                sb.append('[');
                for (int i = 0; i < l.size(); i++) {
                    if (i > 0) {
                        sb.append(',');
                    }
                    write(sb, l.get(i));
                }
                sb.append(']');
            }
            default ->
                    throw new IllegalArgumentException(
                            "canonical JSON: unsupported value of type "
                                    + v.getClass().getName()
                                    + "; expected a map, list, string, integer, boolean or null");
        }
    }

    private static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
