package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.SourceRef;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.io.BodyStreams;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.io.ByteArrayOutputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Binary form of a {@link VectorRecord}: strings as length-prefixed UTF-8, floats big-endian. */
public final class RecordCodec {
    private static final byte T_STRING = 1, T_LONG = 2, T_DOUBLE = 3, T_BOOLEAN = 4;

    private RecordCodec() {}

    /** A record's plaintext, as it is sealed. */
    static byte[] encode(VectorRecord r) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            write(new DataOutputStream(bytes), r);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    public static void write(DataOutput out, VectorRecord r) throws IOException {
        writeString(out, r.id());
        writeString(out, r.tenant());
        writeNullable(out, r.subject());
        SourceRef src = r.source();
        out.writeBoolean(src != null);
        if (src != null) {
            writeString(out, src.kind());
            writeString(out, src.id());
            out.writeLong(src.version());
        }
        float[] v = r.vector();
        out.writeInt(v.length);
        // In bulk: one call per float was a large part of a store's open (docs/BENCHMARKS.md).
        BodyStreams.writeFloats(out, v, 0, v.length);
        writeNullable(out, r.text());
        out.writeInt(r.metadata().size());
        for (Map.Entry<String, Object> e : r.metadata().entrySet()) {
            writeString(out, e.getKey());
            switch (e.getValue()) {
                case String s -> {
                    out.writeByte(T_STRING);
                    writeString(out, s);
                }
                case Long l -> {
                    out.writeByte(T_LONG);
                    out.writeLong(l);
                }
                case Double d -> {
                    out.writeByte(T_DOUBLE);
                    out.writeDouble(d);
                }
                case Boolean b -> {
                    out.writeByte(T_BOOLEAN);
                    out.writeBoolean(b);
                }
                default ->
                        throw new IllegalStateException(
                                "unexpected metadata type " + e.getValue().getClass());
            }
        }
        out.writeInt(r.derivedFrom().size());
        for (String d : r.derivedFrom()) {
            writeString(out, d);
        }
    }

    /**
     * Decodes a record from its plaintext. Reads the array in place and adopts what it makes (no
     * builder, no defensive copies): at an open this runs once per stored record, and the
     * stream-and-builder path allocated each vector three times.
     *
     * @throws IOException when the bytes end early or hold an impossible count or an unknown tag
     */
    public static VectorRecord read(byte[] plain) throws IOException {
        return read(plain, plain.length, null);
    }

    /**
     * Decodes a record from the first {@code length} bytes of {@code plain}. When {@code
     * vectorScratch} has the vector's length, the vector is decoded into it and the record holds
     * it: the caller takes the vector out (or copies it) before the next decode, and zeros it.
     *
     * @throws IOException when the bytes end early or hold an impossible count or an unknown tag
     */
    public static VectorRecord read(byte[] plain, int length, float[] vectorScratch)
            throws IOException {
        ByteBuffer in = ByteBuffer.wrap(plain, 0, length);
        try {
            String id = readString(in);
            String tenant = readString(in);
            String subject = readNullable(in);
            SourceRef source =
                    in.get() != 0
                            ? new SourceRef(readString(in), readString(in), in.getLong())
                            : null;
            int dimension = checkedCount(in.getInt(), "vector length");
            float[] v =
                    vectorScratch != null && vectorScratch.length == dimension
                            ? vectorScratch
                            : new float[dimension];
            in.asFloatBuffer().get(v);
            in.position(in.position() + 4 * v.length);
            byte[] text = null;
            if (in.get() != 0) {
                text = new byte[checkedCount(in.getInt(), "text length")];
                in.get(text);
            }
            int m = checkedCount(in.getInt(), "metadata count");
            Map<String, Object> metadata = m == 0 ? Map.of() : new LinkedHashMap<>(2 * m);
            for (int i = 0; i < m; i++) {
                String key = readString(in);
                byte type = in.get();
                Object value =
                        switch (type) {
                            case T_STRING -> readString(in);
                            case T_LONG -> in.getLong();
                            case T_DOUBLE -> in.getDouble();
                            case T_BOOLEAN -> in.get() != 0;
                            default -> throw new IOException("unknown metadata type tag " + type);
                        };
                metadata.put(key, value);
            }
            int d = checkedCount(in.getInt(), "derivedFrom count");
            String[] derivedFrom = new String[d];
            for (int i = 0; i < d; i++) {
                derivedFrom[i] = readString(in);
            }
            return RecordAccess.decoded(
                    new RecordAccess.Decoded(
                            id, tenant, subject, source, v, text, metadata, List.of(derivedFrom)));
        } catch (BufferUnderflowException e) {
            throw new IOException("record ends early: " + length + " bytes", e);
        }
    }

    private static int checkedCount(int n, String what) throws IOException {
        if (n < 0 || n > (1 << 26)) {
            throw new IOException(what + " " + n + " is impossible");
        }
        return n;
    }

    static void writeString(DataOutput out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static String readString(ByteBuffer in) throws IOException {
        int n = checkedCount(in.getInt(), "string length");
        if (n > in.remaining()) {
            throw new BufferUnderflowException();
        }
        String s =
                new String(in.array(), in.arrayOffset() + in.position(), n, StandardCharsets.UTF_8);
        in.position(in.position() + n);
        return s;
    }

    private static void writeNullable(DataOutput out, String s) throws IOException {
        out.writeBoolean(s != null);
        if (s != null) {
            writeString(out, s);
        }
    }

    private static String readNullable(ByteBuffer in) throws IOException {
        return in.get() != 0 ? readString(in) : null;
    }
}
