package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.core.internal.engine.JoinKeys;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What only a forget operation may know while it lives: its scope in the clear, the records it
 * removed with copies of their vectors (the probe), and what verification flagged. The protocol
 * seals the encoding under the operation's own key in the operation log and destroys the key when
 * the operation seals.
 */
final class OperationSecret {

    /** A record removed by an operation, with the collection it was in. */
    record Forgotten(String collection, CollectionEraser.Removed removed) {}

    ForgetScope scope;

    /** For a metadata scope: the record ids the filter matched at the mark, per collection. */
    Map<String, Set<String>> resolved;

    final List<Forgotten> removed = new ArrayList<>();
    final List<Suspect> suspects = new ArrayList<>();

    /**
     * Declared identifiers of the subject (names, emails, phone numbers), as the request gave them.
     */
    final List<String> identifiers = new ArrayList<>();

    /**
     * Identifiers of the subject read from its own records at cleanup, under the metadata keys
     * their collections declare, one per identifier (as {@link JoinKeys.Identifier} normalises it).
     */
    final List<Found> found = new ArrayList<>();

    /**
     * An identifier of the subject read from one of its records.
     *
     * @param source where it was read: {@code <collection>/<metadata key>} (a schema name, not
     *     subject data)
     * @param value the value as the record held it
     */
    record Found(String source, String value) {}

    /**
     * Adds an identifier read from a record, unless one that matches the same way is held already.
     */
    void addFound(Found f) {
        JoinKeys.Identifier id = JoinKeys.Identifier.of(f.value());
        for (String declared : identifiers) {
            if (JoinKeys.Identifier.of(declared).equals(id)) {
                return;
            }
        }
        for (Found g : found) {
            if (JoinKeys.Identifier.of(g.value()).equals(id)) {
                return;
            }
        }
        found.add(f);
    }

    /**
     * A buffer whose working array is wiped when its bytes are taken: the encoding is plaintext.
     */
    private static final class WipedBuffer extends ByteArrayOutputStream {
        byte[] takeAndWipe() {
            byte[] out = toByteArray();
            Arrays.fill(buf, (byte) 0);
            return out;
        }
    }

    /** The plaintext encoding; the caller wipes it after sealing. */
    byte[] encode() throws IOException {
        WipedBuffer bytes = new WipedBuffer();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            writeScope(out, scope);
            out.writeBoolean(resolved != null);
            if (resolved != null) {
                out.writeInt(resolved.size());
                for (Map.Entry<String, Set<String>> e : resolved.entrySet()) {
                    out.writeUTF(e.getKey());
                    writeStrings(out, List.copyOf(e.getValue()));
                }
            }
            out.writeInt(removed.size());
            for (Forgotten f : removed) {
                VectorRecord r = f.removed().record();
                out.writeUTF(f.collection());
                out.writeUTF(r.id());
                out.writeBoolean(r.subject() != null);
                if (r.subject() != null) {
                    out.writeUTF(r.subject());
                }
                out.writeInt(f.removed().ordinal());
                out.writeLong(f.removed().version());
                float[] v = RecordAccess.vectorUnsafe(r);
                out.writeInt(v.length);
                for (float x : v) {
                    out.writeFloat(x);
                }
            }
            out.writeInt(suspects.size());
            for (Suspect s : suspects) {
                out.writeUTF(s.reason());
                out.writeUTF(s.collection());
                out.writeUTF(s.recordId());
                out.writeDouble(s.score());
                out.writeUTF(s.relatedTo());
            }
            writeStrings(out, identifiers);
            // After the identifiers, so that parts written before text terms existed still read.
            out.writeInt(removed.size());
            for (Forgotten f : removed) {
                writeStrings(out, f.removed().textTerms());
            }
            // After the text terms, so that parts written before found identifiers existed still
            // read.
            out.writeInt(found.size());
            for (Found f : found) {
                out.writeUTF(f.source());
                out.writeUTF(f.value());
            }
        }
        return bytes.takeAndWipe();
    }

    static OperationSecret decode(byte[] plain) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(plain));
        OperationSecret s = new OperationSecret();
        s.scope = readScope(in);
        if (in.readBoolean()) {
            s.resolved = new TreeMap<>();
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                s.resolved.put(in.readUTF(), Set.copyOf(readStrings(in)));
            }
        }
        int n = in.readInt();
        for (int i = 0; i < n; i++) {
            String coll = in.readUTF();
            String rid = in.readUTF();
            String subject = in.readBoolean() ? in.readUTF() : null;
            int ord = in.readInt();
            long version = in.readLong();
            float[] v = new float[in.readInt()];
            for (int j = 0; j < v.length; j++) {
                v[j] = in.readFloat();
            }
            s.removed.add(
                    new Forgotten(
                            coll,
                            new CollectionEraser.Removed(
                                    VectorRecord.builder(rid).subject(subject).vector(v).build(),
                                    ord,
                                    version,
                                    List.of())));
        }
        n = in.readInt();
        for (int i = 0; i < n; i++) {
            s.suspects.add(
                    new Suspect(
                            in.readUTF(),
                            in.readUTF(),
                            in.readUTF(),
                            in.readDouble(),
                            in.readUTF()));
        }
        if (in.available() > 0) { // parts written before identifiers existed end here
            s.identifiers.addAll(readStrings(in));
        }
        if (in.available() > 0) { // and those written before text terms existed, here
            int m = in.readInt();
            if (m != s.removed.size()) {
                throw new IOException(
                        "operation secret: "
                                + m
                                + " lists of text terms for "
                                + s.removed.size()
                                + " records");
            }
            for (int i = 0; i < m; i++) {
                Forgotten f = s.removed.get(i);
                CollectionEraser.Removed r = f.removed();
                s.removed.set(
                        i,
                        new Forgotten(
                                f.collection(),
                                new CollectionEraser.Removed(
                                        r.record(), r.ordinal(), r.version(), readStrings(in))));
            }
        }
        if (in.available()
                > 0) { // and those written before identifiers were read from records, here
            int m = in.readInt();
            for (int i = 0; i < m; i++) {
                s.found.add(new Found(in.readUTF(), in.readUTF()));
            }
        }
        return s;
    }

    private static void writeScope(DataOutputStream out, ForgetScope scope) throws IOException {
        switch (scope) {
            case ForgetScope.Subject s -> {
                out.writeByte(1);
                out.writeUTF(s.subject());
            }
            case ForgetScope.Records r -> {
                out.writeByte(2);
                writeStrings(out, List.copyOf(r.ids()));
            }
            case ForgetScope.Source s -> {
                out.writeByte(3);
                out.writeUTF(s.sourceKind());
                out.writeUTF(s.sourceId());
                out.writeLong(s.version() == null ? -1 : s.version());
            }
            // A filter is not stored: it is resolved to record ids at the mark, which are.
            case ForgetScope.Metadata m -> out.writeByte(4);
        }
    }

    private static ForgetScope readScope(DataInputStream in) throws IOException {
        byte kind = in.readByte();
        return switch (kind) {
            case 1 -> new ForgetScope.Subject(in.readUTF());
            case 2 -> new ForgetScope.Records(new HashSet<>(readStrings(in)));
            case 3 -> {
                String k = in.readUTF();
                String id = in.readUTF();
                long v = in.readLong();
                yield new ForgetScope.Source(k, id, v < 0 ? null : v);
            }
            // Matches nothing by itself: the resolved ids decide (see LiveOperation.scopeTest).
            case 4 -> new ForgetScope.Metadata(Filter.exists("\0resolved"));
            default -> throw new IOException("unknown scope kind " + kind);
        };
    }

    private static void writeStrings(DataOutputStream out, List<String> ss) throws IOException {
        out.writeInt(ss.size());
        for (String s : ss) {
            out.writeUTF(s);
        }
    }

    private static List<String> readStrings(DataInputStream in) throws IOException {
        int n = in.readInt();
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(in.readUTF());
        }
        return out;
    }
}
