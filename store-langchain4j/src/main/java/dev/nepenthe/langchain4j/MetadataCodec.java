package dev.nepenthe.langchain4j;

import dev.langchain4j.data.document.Metadata;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Carries LangChain4j metadata through a store that keeps only String, Long, Double and Boolean
 * values, so that every value comes back with the type it went in with.
 *
 * <p>String, Long and Double are stored as they are. UUID is stored as its canonical string,
 * Integer widened to Long and Float widened to Double (exactly: every float is a double), and the
 * keys whose values were one of those three are listed under the reserved key {@value #TYPES_KEY},
 * one entry per key: a type letter ({@code U}, {@code I}, {@code F}), the key's length in
 * characters, a colon and the key ({@code "I3:ageU2:id"}), so a key may hold any character. Filters
 * see the stored values: a UUID equals its string, an Integer 42 equals a Long 42, and a Float
 * compares by its exact value.
 */
final class MetadataCodec {

    /** The reserved metadata key that lists which values were UUID, Integer or Float. */
    static final String TYPES_KEY = "nepenthe.lc4j.types";

    private MetadataCodec() {}

    /**
     * The store's form of a segment's metadata.
     *
     * @throws IllegalArgumentException if the metadata uses the reserved key
     */
    static Map<String, Object> encode(Metadata metadata) {
        Map<String, Object> in = metadata.toMap();
        if (in.containsKey(TYPES_KEY)) {
            throw new IllegalArgumentException(
                    "metadata key '"
                            + TYPES_KEY
                            + "' is reserved: the Nepenthe adapter lists there which values were"
                            + " UUID, Integer or Float; expected segments without it");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        StringBuilder types = new StringBuilder();
        for (Map.Entry<String, Object> e : in.entrySet()) {
            String key = e.getKey();
            Object value = e.getValue();
            switch (value) {
                case UUID u -> {
                    out.put(key, u.toString());
                    note(types, 'U', key);
                }
                case Integer i -> {
                    out.put(key, i.longValue());
                    note(types, 'I', key);
                }
                case Float f -> {
                    out.put(key, f.doubleValue());
                    note(types, 'F', key);
                }
                case String s -> out.put(key, s);
                case Long l -> out.put(key, l);
                case Double d -> out.put(key, d);
                // Metadata refuses other types itself; a subclass that lets one through is named,
                // not guessed at.
                default ->
                        throw new IllegalArgumentException(
                                "metadata '"
                                        + key
                                        + "': expected a String, UUID, Integer,"
                                        + " Long, Float or Double, got "
                                        + value.getClass().getName());
            }
        }
        if (!types.isEmpty()) {
            out.put(TYPES_KEY, types.toString());
        }
        return out;
    }

    private static void note(StringBuilder types, char type, String key) {
        types.append(type).append(key.length()).append(':').append(key);
    }

    /**
     * LangChain4j metadata from a stored record's metadata. A Boolean (which LangChain4j metadata
     * cannot hold; only records written without the adapter have one) comes back as the string
     * {@code "true"} or {@code "false"}.
     *
     * @throws IllegalStateException if the type list is malformed or names a value of another type
     *     than it says (a record changed outside the adapter)
     */
    static Metadata decode(Map<String, Object> stored) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : stored.entrySet()) {
            if (!e.getKey().equals(TYPES_KEY)) {
                out.put(
                        e.getKey(),
                        e.getValue() instanceof Boolean b ? b.toString() : e.getValue());
            }
        }
        if (stored.get(TYPES_KEY) instanceof String types) {
            restoreTypes(types, out);
        } else if (stored.containsKey(TYPES_KEY)) {
            throw new IllegalStateException(
                    "metadata '"
                            + TYPES_KEY
                            + "': expected the adapter's type list (a String),"
                            + " got a "
                            + stored.get(TYPES_KEY).getClass().getName());
        }
        return new Metadata(out);
    }

    private static void restoreTypes(String types, Map<String, Object> values) {
        int at = 0;
        while (at < types.length()) {
            char type = types.charAt(at);
            int colon = types.indexOf(':', at + 1);
            if (colon < 0) {
                throw malformed(at);
            }
            int length;
            try {
                length = Integer.parseInt(types, at + 1, colon, 10);
            } catch (NumberFormatException ex) {
                throw malformed(at);
            }
            if (length < 0 || colon + 1 + length > types.length()) {
                throw malformed(at);
            }
            String key = types.substring(colon + 1, colon + 1 + length);
            at = colon + 1 + length;
            Object value = values.get(key);
            Object restored = restore(type, value);
            if (restored == null) {
                String typeName =
                        type == 'U'
                                ? "UUID"
                                : type == 'I' ? "Integer" : type == 'F' ? "Float" : null;
                if (typeName == null) {
                    throw malformed(colon - String.valueOf(length).length() - 1);
                }
                throw new IllegalStateException(
                        "metadata '"
                                + key
                                + "': the adapter's type list says "
                                + typeName
                                + ", but the stored value is "
                                + (value == null
                                        ? "missing"
                                        : "a " + value.getClass().getName() + " that is not one")
                                + " (was the record changed outside the adapter?)");
            }
            values.put(key, restored);
        }
    }

    /**
     * The value as the type letter says it went in, or null when it cannot be (or the letter is
     * unknown).
     */
    private static Object restore(char type, Object value) {
        return switch (type) {
            case 'U' -> {
                try {
                    yield value instanceof String s ? UUID.fromString(s) : null;
                } catch (IllegalArgumentException notAUuid) {
                    yield null;
                }
            }
            case 'I' ->
                    value instanceof Long l && l == (int) (long) l
                            ? Integer.valueOf((int) (long) l)
                            : null;
            case 'F' ->
                    value instanceof Double d && d == (float) (double) d
                            ? Float.valueOf((float) (double) d)
                            : null;
            default -> null;
        };
    }

    private static IllegalStateException malformed(int position) {
        return new IllegalStateException(
                "metadata '"
                        + TYPES_KEY
                        + "': expected entries of a type letter (U, I or F),"
                        + " a length, ':' and a key; malformed at character "
                        + position);
    }
}
