package dev.nepenthe.server.cli;

import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.SourceRef;
import dev.nepenthe.grpc.v1.Value;
import java.io.IOException;
import java.io.StringReader;

/**
 * One line of an ingest file as a {@link Record}: a JSON object with {@code id} (string) and {@code
 * vector} (array of numbers), and optionally {@code subject}, {@code text} (strings), {@code
 * metadata} (an object of strings, numbers and booleans; a number without a fraction or exponent is
 * an integer), {@code source} ({@code {"kind", "id", "version"}}) and {@code derivedFrom} (array of
 * record ids, or {@code "@<collection>/<id>"} for a record in another collection). A null optional
 * field counts as absent.
 *
 * <p>Strict on purpose: an unknown field (a typo such as {@code "vectors"}), a value of the wrong
 * type, or anything after the object is refused with an {@link IllegalArgumentException} naming the
 * field, what was expected and what arrived; the caller adds the file and line. Gson's streaming
 * reader in strict mode does the tokenizing, so comments, single quotes and NaN are refused too.
 */
final class JsonlRecordReader {

    private final int dimension;

    /**
     * @param dimension the collection's dimension, checked here so the error can name the line; 0
     *     to skip
     */
    JsonlRecordReader(int dimension) {
        this.dimension = dimension;
    }

    Record parse(String line) {
        try {
            return read(line);
        } catch (IOException | IllegalStateException e) {
            // Gson's own messages: "Unterminated array at line 1 column 20 path $.vector[2]", then
            // a
            // troubleshooting link on a second line. Keep the first line; the caller names the
            // line.
            String m =
                    e.getMessage() == null
                            ? e.getClass().getSimpleName()
                            : e.getMessage().lines().findFirst().orElse("");
            throw new IllegalArgumentException(
                    "expected one JSON object, got malformed JSON: "
                            + m.replace(" at line 1 column ", " at column "));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected a number, got " + e.getMessage());
        }
    }

    private Record read(String line) throws IOException {
        JsonReader in = new JsonReader(new StringReader(line));
        in.setStrictness(Strictness.STRICT);
        if (in.peek() != JsonToken.BEGIN_OBJECT) {
            throw new IllegalArgumentException("expected a JSON object, got " + what(in.peek()));
        }
        Record.Builder b = Record.newBuilder();
        boolean hasId = false;
        boolean hasVector = false;
        in.beginObject();
        while (in.hasNext()) {
            String field = in.nextName();
            if (in.peek() == JsonToken.NULL && !field.equals("id") && !field.equals("vector")) {
                in.nextNull();
                continue;
            }
            switch (field) {
                case "id" -> {
                    b.setId(string(in, "id"));
                    hasId = true;
                }
                case "vector" -> {
                    vector(in, b);
                    hasVector = true;
                }
                case "subject" -> b.setSubject(string(in, "subject"));
                case "text" -> b.setText(string(in, "text"));
                case "metadata" -> metadata(in, b);
                case "source" -> b.setSource(source(in));
                case "derivedFrom" -> {
                    expect(in, JsonToken.BEGIN_ARRAY, "derivedFrom", "an array of record ids");
                    in.beginArray();
                    for (int i = 0; in.hasNext(); i++) {
                        b.addDerivedFrom(string(in, "derivedFrom[" + i + "]"));
                    }
                    in.endArray();
                }
                default ->
                        throw new IllegalArgumentException(
                                "unknown field '"
                                        + field
                                        + "' (expected id, vector,"
                                        + " subject, text, metadata, source, derivedFrom)");
            }
        }
        in.endObject();
        if (in.peek() != JsonToken.END_DOCUMENT) {
            throw new IllegalArgumentException(
                    "expected the line to end after the object, got " + what(in.peek()));
        }
        if (!hasId || !hasVector) {
            throw new IllegalArgumentException(
                    "expected fields id and vector, got no " + (hasId ? "vector" : "id"));
        }
        return b.build();
    }

    private void vector(JsonReader in, Record.Builder b) throws IOException {
        expect(in, JsonToken.BEGIN_ARRAY, "vector", "an array of numbers");
        in.beginArray();
        int n = 0;
        while (in.hasNext()) {
            String where = "vector[" + n + "]";
            expect(in, JsonToken.NUMBER, where, "a number");
            double d = in.nextDouble();
            float f = (float) d;
            if (Float.isInfinite(f)) {
                throw new IllegalArgumentException(
                        where + ": expected a number within float range, got " + d);
            }
            b.addVector(f);
            n++;
        }
        in.endArray();
        if (n == 0 || (dimension > 0 && n != dimension)) {
            throw new IllegalArgumentException(
                    "vector: expected "
                            + (dimension > 0
                                    ? dimension + " numbers (the" + " collection's dimension)"
                                    : "at least one number")
                            + ", got "
                            + n);
        }
    }

    private static void metadata(JsonReader in, Record.Builder b) throws IOException {
        expect(
                in,
                JsonToken.BEGIN_OBJECT,
                "metadata",
                "an object of strings, numbers and booleans");
        in.beginObject();
        while (in.hasNext()) {
            String key = in.nextName();
            String where = "metadata." + key;
            Value v =
                    switch (in.peek()) {
                        case STRING -> Value.newBuilder().setStringValue(in.nextString()).build();
                        case BOOLEAN -> Value.newBuilder().setBoolValue(in.nextBoolean()).build();
                        case NUMBER -> {
                            String literal = in.nextString();
                            if (literal.contains(".")
                                    || literal.contains("e")
                                    || literal.contains("E")) {
                                yield Value.newBuilder()
                                        .setDoubleValue(Double.parseDouble(literal))
                                        .build();
                            }
                            try {
                                yield Value.newBuilder()
                                        .setIntValue(Long.parseLong(literal))
                                        .build();
                            } catch (NumberFormatException e) {
                                throw new IllegalArgumentException(
                                        where
                                                + ": expected an integer within 64 bits, got "
                                                + literal);
                            }
                        }
                        default ->
                                throw new IllegalArgumentException(
                                        where
                                                + ": expected a string, number or boolean, got "
                                                + what(in.peek()));
                    };
            b.putMetadata(key, v);
        }
        in.endObject();
    }

    private static SourceRef source(JsonReader in) throws IOException {
        expect(in, JsonToken.BEGIN_OBJECT, "source", "an object {kind, id, version}");
        SourceRef.Builder s = SourceRef.newBuilder();
        boolean hasVersion = false;
        in.beginObject();
        while (in.hasNext()) {
            String field = in.nextName();
            switch (field) {
                case "kind" -> s.setKind(string(in, "source.kind"));
                case "id" -> s.setId(string(in, "source.id"));
                case "version" -> {
                    expect(in, JsonToken.NUMBER, "source.version", "an integer");
                    String literal = in.nextString();
                    try {
                        s.setVersion(Long.parseLong(literal));
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(
                                "source.version: expected an integer, got " + literal);
                    }
                    hasVersion = true;
                }
                default ->
                        throw new IllegalArgumentException(
                                "source: unknown field '"
                                        + field
                                        + "' (expected kind, id, version)");
            }
        }
        in.endObject();
        if (s.getKind().isEmpty() || s.getId().isEmpty() || !hasVersion) {
            throw new IllegalArgumentException(
                    "source: expected kind, id and version, got no "
                            + (s.getKind().isEmpty()
                                    ? "kind"
                                    : s.getId().isEmpty() ? "id" : "version"));
        }
        return s.build();
    }

    private static String string(JsonReader in, String where) throws IOException {
        expect(in, JsonToken.STRING, where, "a string");
        return in.nextString();
    }

    private static void expect(JsonReader in, JsonToken token, String where, String expected)
            throws IOException {
        if (in.peek() != token) {
            throw new IllegalArgumentException(
                    where + ": expected " + expected + ", got " + what(in.peek()));
        }
    }

    private static String what(JsonToken t) {
        return switch (t) {
            case BEGIN_ARRAY -> "an array";
            case BEGIN_OBJECT -> "an object";
            case STRING -> "a string";
            case NUMBER -> "a number";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            case END_DOCUMENT -> "the end of the line";
            default -> t.name();
        };
    }
}
