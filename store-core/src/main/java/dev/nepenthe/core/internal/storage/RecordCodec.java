package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.SourceRef;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.io.BodyStreams;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Binary form of a {@link VectorRecord}: strings as length-prefixed UTF-8, floats big-endian. */
public final class RecordCodec {
    private static final byte T_STRING = 1, T_LONG = 2, T_DOUBLE = 3, T_BOOLEAN = 4;

    private RecordCodec() {}

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
        // In bulk: one call per float was a third of a store's open (100,000 x 384).
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
                default -> throw new IllegalStateException("unexpected metadata type " + e.getValue().getClass());
            }
        }
        out.writeInt(r.derivedFrom().size());
        for (String d : r.derivedFrom()) {
            writeString(out, d);
        }
    }

    public static VectorRecord read(DataInput in) throws IOException {
        VectorRecord.Builder b = VectorRecord.builder(readString(in)).tenant(readString(in)).subject(readNullable(in));
        if (in.readBoolean()) {
            b.source(new SourceRef(readString(in), readString(in), in.readLong()));
        }
        int dim = checkedCount(in.readInt(), "vector length");
        float[] v = new float[dim];
        BodyStreams.readFloats(in, v, 0, dim);
        b.vector(v).text(readNullable(in));
        int m = checkedCount(in.readInt(), "metadata count");
        for (int i = 0; i < m; i++) {
            String key = readString(in);
            byte type = in.readByte();
            Object value = switch (type) {
                case T_STRING -> readString(in);
                case T_LONG -> in.readLong();
                case T_DOUBLE -> in.readDouble();
                case T_BOOLEAN -> in.readBoolean();
                default -> throw new IOException("unknown metadata type tag " + type);
            };
            b.metadata(key, value);
        }
        int d = checkedCount(in.readInt(), "derivedFrom count");
        for (int i = 0; i < d; i++) {
            b.derivedFrom(readString(in));
        }
        return b.build();
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

    static String readString(DataInput in) throws IOException {
        int n = checkedCount(in.readInt(), "string length");
        byte[] b = new byte[n];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private static void writeNullable(DataOutput out, String s) throws IOException {
        out.writeBoolean(s != null);
        if (s != null) {
            writeString(out, s);
        }
    }

    private static String readNullable(DataInput in) throws IOException {
        return in.readBoolean() ? readString(in) : null;
    }
}
