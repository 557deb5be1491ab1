package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.Durability;
import dev.nepenthe.core.audit.LedgerHead;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ErasureLevel;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.io.TestPoints;
import dev.nepenthe.core.internal.storage.WriteAheadLog;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The durable state of forget operations and legal holds, in the keystore folder (apart from the
 * data, so restoring an old data snapshot cannot roll an operation back). Each entry is the whole
 * public state of one operation (hashes, counts, states, times, outcomes, receipt), plus, when it
 * changed, the operation's private part (its scope and probe vectors) sealed under the operation's
 * own key, which is destroyed when the operation seals. Replay keeps the last entry of each
 * operation, hold and re-admission.
 */
final class OperationLog implements Closeable {

    private static final byte OPERATION = 1,
            HOLD = 2,
            HOLD_LIFTED = 3,
            LEDGER_HEAD = 4,
            READMISSION = 5;

    /**
     * Version 2 adds an operation's outcome and whether its tenant was known; version 3 the probe
     * policy it was marked under and the probes that ran; version 4 the keyed hashes of the subject
     * identifiers it looked for. Older entries still read.
     */
    private static final int FORMAT_VERSION = 4;

    /** Generations kept before the log is compacted to one entry per operation and hold at open. */
    private static final int MAX_GENERATIONS = 8;

    /** The public state of an operation: nothing here is content or a plaintext identifier. */
    static final class Public {
        String id;
        String tenant;
        String scopeKind;
        KeyedHash.Hash scopeHash;
        String reasonCode;
        KeyedHash.Hash idempotency;
        KeyedHash.Hash requestHash;
        double threshold;
        ErasureLevel level = ErasureLevel.REPAIR;
        OperationState state;
        final Map<OperationState, Long> timeline = new LinkedHashMap<>();
        final Map<String, Integer> forgotten = new LinkedHashMap<>();

        /** What each surface's purge removed, in its own unit. */
        final Map<String, Long> purged = new LinkedHashMap<>();

        final List<SurfaceOutcome> surfaces = new ArrayList<>();
        final List<String> holds = new ArrayList<>();
        String receipt;
        String note;
        int suspects;

        /** Write fences that outlive the operation: keyed hashes only. */
        final List<KeyedHash.Hash> fences = new ArrayList<>();

        /** What the seal found and did (an {@code ErasureOutcome} name), null until sealed. */
        String outcome;

        /** Whether any collection held a record of the tenant when the operation was marked. */
        boolean tenantKnown = true;

        /**
         * How many identifiers the request declared (the identifiers live in the sealed private
         * part).
         */
        int identifiers;

        /** The ledger epoch its receipt's entry is in (see {@link #ledgerEpoch()}). */
        int ledgerEpoch;

        /**
         * The probe policy's tenant size above which the probe searches an index, as at the mark;
         * operations recorded before approximate probes existed keep the exact probe.
         */
        int approximateAbove = Integer.MAX_VALUE;

        /** Whether the request forced the exact probe everywhere. */
        boolean exactProbe;

        /** Which probe ran in each collection at the last verification. */
        final List<ProbeRun> probes = new ArrayList<>();

        /** The subject identifiers the last verification looked for, as keyed hashes. */
        final List<Sought> sought = new ArrayList<>();
    }

    /**
     * A subject identifier a verification looked for: its keyed hash, and where it came from
     * ({@code request}, or {@code <collection>/<metadata key>} when read from the subject's
     * records).
     */
    record Sought(KeyedHash.Hash hash, String source) {}

    /** One replayed operation: its public state and its latest private part (sealed), if any. */
    // Replay only: the sealed bytes are read once, never compared or hashed as a record.
    @SuppressWarnings("ArrayRecordComponent")
    record Stored(Public pub, byte[] sealedPrivate) {}

    record StoredHold(
            String id,
            String tenant,
            String scopeKind,
            KeyedHash.Hash hash,
            String reasonCode,
            long placedAt,
            long liftedAt) {}

    /**
     * A re-admission: the fences of sealed operations it lifts, as (operation, keyed hash) pairs,
     * and the version floor it took in each collection (by incarnation id), below which a record
     * those fences name is still one the operation erased. Pending until its ledger entry is
     * written ({@code ledgerSeq} -1); only a complete one lifts anything.
     */
    record StoredReadmission(
            String id,
            String tenant,
            String scopeKind,
            KeyedHash.Hash scopeHash,
            String reasonCode,
            long atMicros,
            List<Lift> lifts,
            Map<String, Long> floors,
            long ledgerSeq,
            String ledgerHash) {

        /** One fence a sealed operation left, lifted. */
        record Lift(String operation, KeyedHash.Hash fence) {}

        StoredReadmission {
            lifts = List.copyOf(lifts);
            floors = Map.copyOf(floors);
        }

        boolean complete() {
            return ledgerSeq >= 0;
        }
    }

    private final WriteAheadLog log;
    private final Map<String, Stored> operations = new LinkedHashMap<>();
    private final Map<String, StoredReadmission> readmissions = new LinkedHashMap<>();
    private final Map<String, StoredHold> holds = new LinkedHashMap<>();

    /** The evidence ledger's head as last anchored here, or null before the first anchor. */
    private LedgerHead ledgerHead;

    /** Which ledger the anchor is in: 0 for the first, one more after each operator restart. */
    private int ledgerEpoch;

    private OperationLog(WriteAheadLog log) {
        this.log = log;
    }

    static OperationLog open(Path dir, TestPoints points) throws IOException {
        List<byte[]> entries = new ArrayList<>();
        WriteAheadLog wal =
                WriteAheadLog.open(dir, Durability.SYNC, (g, p) -> entries.add(p), null, points);
        OperationLog ops = new OperationLog(wal);
        for (byte[] e : entries) {
            try {
                ops.apply(e);
            } catch (IOException | RuntimeException ex) {
                wal.close();
                throw new CorruptFileException(
                        dir, "forget operation log entry does not parse: " + ex.getMessage(), ex);
            }
        }
        if (wal.generations().size() > MAX_GENERATIONS) {
            long gen = wal.rotate();
            List<byte[]> compact = new ArrayList<>();
            for (Stored s : ops.operations.values()) {
                compact.add(encode(s.pub(), s.sealedPrivate()));
            }
            for (StoredHold h : ops.holds.values()) {
                compact.add(encode(h));
            }
            for (StoredReadmission r : ops.readmissions.values()) {
                compact.add(encode(r));
            }
            if (ops.ledgerHead != null) {
                compact.add(encode(ops.ledgerHead, ops.ledgerEpoch));
            }
            if (!compact.isEmpty()) {
                wal.sync(wal.append(compact));
            }
            wal.deleteBefore(gen);
        }
        return ops;
    }

    Map<String, Stored> operations() {
        return operations;
    }

    Map<String, StoredHold> holds() {
        return holds;
    }

    Map<String, StoredReadmission> readmissions() {
        return readmissions;
    }

    synchronized void saveReadmission(StoredReadmission r) throws IOException {
        byte[] e = encode(r);
        log.sync(log.append(e));
        apply(e);
    }

    /**
     * Durably records an operation's state; {@code sealedPrivate} null keeps the previous private
     * part.
     */
    synchronized void save(Public pub, byte[] sealedPrivate) throws IOException {
        byte[] e = encode(pub, sealedPrivate);
        log.sync(log.append(e));
        apply(e);
    }

    /**
     * Durably records several operations' states with one fsync; {@code sealedPrivate} holds one
     * private part (or null) per operation, as in {@link #save}. The entries are appended together:
     * after a crash a prefix of them may be there, each whole or absent.
     */
    synchronized void saveAll(List<Public> pubs, List<byte[]> sealedPrivate) throws IOException {
        if (pubs.isEmpty()) {
            return;
        }
        List<byte[]> es = new ArrayList<>(pubs.size());
        for (int i = 0; i < pubs.size(); i++) {
            es.add(encode(pubs.get(i), sealedPrivate.get(i)));
        }
        log.sync(log.append(es));
        for (byte[] e : es) {
            apply(e);
        }
    }

    /**
     * Anchors the evidence ledger's head: written (fsynced) after every ledger append, so that a
     * ledger later found shorter than this, or with another entry here, was cut or rolled back.
     */
    synchronized void saveLedgerHead(LedgerHead head, int epoch) throws IOException {
        byte[] e = encode(head, epoch);
        log.sync(log.append(e));
        apply(e);
    }

    synchronized LedgerHead ledgerHead() {
        return ledgerHead;
    }

    synchronized int ledgerEpoch() {
        return ledgerEpoch;
    }

    synchronized void saveHold(StoredHold h) throws IOException {
        byte[] e = encode(h);
        log.sync(log.append(e));
        apply(e);
    }

    private void apply(byte[] entry) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(entry));
        byte type = in.readByte();
        int version = in.readInt();
        if (version < 1 || version > FORMAT_VERSION) {
            throw new IOException(
                    "entry format version "
                            + version
                            + ", this build reads 1 to "
                            + FORMAT_VERSION);
        }
        switch (type) {
            case LEDGER_HEAD -> {
                long seq = in.readLong();
                byte[] h = new byte[32];
                in.readFully(h);
                ledgerHead = new LedgerHead(seq, HexFormat.of().formatHex(h));
                ledgerEpoch = in.readInt();
            }
            case OPERATION -> {
                Public p = readPublic(in, version);
                int n = in.readInt();
                byte[] priv = null;
                if (n > 0) {
                    priv = new byte[n];
                    in.readFully(priv);
                } else {
                    Stored old = operations.get(p.id);
                    priv = old == null ? null : old.sealedPrivate();
                }
                if (n < 0) {
                    priv = null; // the private part was destroyed with the operation's key
                }
                operations.put(p.id, new Stored(p, priv));
            }
            case READMISSION -> {
                String id = in.readUTF();
                String tenant = in.readUTF();
                String kind = in.readUTF();
                KeyedHash.Hash scope = hash(in);
                String reason = in.readUTF();
                long at = in.readLong();
                int n = in.readInt();
                List<StoredReadmission.Lift> lifts = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    lifts.add(new StoredReadmission.Lift(in.readUTF(), hash(in)));
                }
                n = in.readInt();
                Map<String, Long> floors = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    floors.put(in.readUTF(), in.readLong());
                }
                long seq = in.readLong();
                String ledgerHash = readNullable(in);
                readmissions.put(
                        id,
                        new StoredReadmission(
                                id,
                                tenant,
                                kind,
                                scope,
                                reason,
                                at,
                                lifts,
                                floors,
                                seq,
                                ledgerHash));
            }
            case HOLD, HOLD_LIFTED -> {
                StoredHold h =
                        new StoredHold(
                                in.readUTF(),
                                in.readUTF(),
                                in.readUTF(),
                                hash(in),
                                in.readUTF(),
                                in.readLong(),
                                in.readLong());
                holds.put(h.id(), h);
            }
            default -> throw new IOException("unknown entry type " + type);
        }
    }

    /** Marker for "the private part is gone" in {@link #save}. */
    static final byte[] DESTROYED = new byte[0];

    // Identity on purpose: DESTROYED is a marker array, told apart from any content.
    @SuppressWarnings("ReferenceEquality")
    private static byte[] encode(Public p, byte[] sealedPrivate) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(OPERATION);
            out.writeInt(FORMAT_VERSION);
            writePublic(out, p);
            if (sealedPrivate == DESTROYED) {
                out.writeInt(-1);
            } else if (sealedPrivate == null) {
                out.writeInt(0);
            } else {
                out.writeInt(sealedPrivate.length);
                out.write(sealedPrivate);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static byte[] encode(LedgerHead head, int epoch) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(LEDGER_HEAD);
            out.writeInt(FORMAT_VERSION);
            out.writeLong(head.seq());
            out.write(HexFormat.of().parseHex(head.hash()));
            out.writeInt(epoch);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static byte[] encode(StoredHold h) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(h.liftedAt() > 0 ? HOLD_LIFTED : HOLD);
            out.writeInt(FORMAT_VERSION);
            out.writeUTF(h.id());
            out.writeUTF(h.tenant());
            out.writeUTF(h.scopeKind());
            out.write(h.hash().bytes());
            out.writeUTF(h.reasonCode());
            out.writeLong(h.placedAt());
            out.writeLong(h.liftedAt());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static byte[] encode(StoredReadmission r) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(READMISSION);
            out.writeInt(FORMAT_VERSION);
            out.writeUTF(r.id());
            out.writeUTF(r.tenant());
            out.writeUTF(r.scopeKind());
            out.write(r.scopeHash().bytes());
            out.writeUTF(r.reasonCode());
            out.writeLong(r.atMicros());
            out.writeInt(r.lifts().size());
            for (StoredReadmission.Lift l : r.lifts()) {
                out.writeUTF(l.operation());
                out.write(l.fence().bytes());
            }
            out.writeInt(r.floors().size());
            for (Map.Entry<String, Long> f : r.floors().entrySet()) {
                out.writeUTF(f.getKey());
                out.writeLong(f.getValue());
            }
            out.writeLong(r.ledgerSeq());
            writeNullable(out, r.ledgerHash());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static void writePublic(DataOutputStream out, Public p) throws IOException {
        out.writeUTF(p.id);
        out.writeUTF(p.tenant);
        out.writeUTF(p.scopeKind);
        out.write(p.scopeHash.bytes());
        out.writeUTF(p.reasonCode);
        out.write(p.idempotency.bytes());
        out.write(p.requestHash.bytes());
        out.writeDouble(p.threshold);
        out.writeUTF(p.level.name());
        out.writeUTF(p.state.name());
        out.writeInt(p.timeline.size());
        for (Map.Entry<OperationState, Long> e : p.timeline.entrySet()) {
            out.writeUTF(e.getKey().name());
            out.writeLong(e.getValue());
        }
        out.writeInt(p.forgotten.size());
        for (Map.Entry<String, Integer> e : p.forgotten.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeInt(e.getValue());
        }
        out.writeInt(p.purged.size());
        for (Map.Entry<String, Long> e : p.purged.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeLong(e.getValue());
        }
        out.writeInt(p.surfaces.size());
        for (SurfaceOutcome s : p.surfaces) {
            out.writeUTF(s.surface());
            out.writeUTF(s.erasureClass().name());
            out.writeLong(s.purged());
            out.writeLong(s.checked());
            out.writeInt(s.problems().size());
            for (String problem : s.problems()) {
                out.writeUTF(problem);
            }
            writeNullable(out, s.residual());
        }
        out.writeInt(p.holds.size());
        for (String h : p.holds) {
            out.writeUTF(h);
        }
        writeNullable(out, p.receipt);
        writeNullable(out, p.note);
        out.writeInt(p.suspects);
        out.writeInt(p.fences.size());
        for (KeyedHash.Hash h : p.fences) {
            out.write(h.bytes());
        }
        writeNullable(out, p.outcome);
        out.writeBoolean(p.tenantKnown);
        out.writeInt(p.identifiers);
        out.writeInt(p.ledgerEpoch);
        out.writeInt(p.approximateAbove);
        out.writeBoolean(p.exactProbe);
        out.writeInt(p.probes.size());
        for (ProbeRun r : p.probes) {
            out.writeUTF(r.collection());
            out.writeBoolean(r.approximate());
            out.writeUTF(r.index());
            writeNullable(out, r.why());
            out.writeInt(r.params().size());
            for (Map.Entry<String, Integer> e : r.params().entrySet()) {
                out.writeUTF(e.getKey());
                out.writeInt(e.getValue());
            }
            out.writeLong(r.survivors());
            out.writeLong(r.scored());
            out.writeInt(r.exactFallbacks());
        }
        out.writeInt(p.sought.size());
        for (Sought id : p.sought) {
            out.write(id.hash().bytes());
            out.writeUTF(id.source());
        }
    }

    private static Public readPublic(DataInputStream in, int version) throws IOException {
        Public p = new Public();
        p.id = in.readUTF();
        p.tenant = in.readUTF();
        p.scopeKind = in.readUTF();
        p.scopeHash = hash(in);
        p.reasonCode = in.readUTF();
        p.idempotency = hash(in);
        p.requestHash = hash(in);
        p.threshold = in.readDouble();
        p.level = ErasureLevel.valueOf(in.readUTF());
        p.state = OperationState.valueOf(in.readUTF());
        int n = in.readInt();
        for (int i = 0; i < n; i++) {
            p.timeline.put(OperationState.valueOf(in.readUTF()), in.readLong());
        }
        n = in.readInt();
        for (int i = 0; i < n; i++) {
            p.forgotten.put(in.readUTF(), in.readInt());
        }
        n = in.readInt();
        for (int i = 0; i < n; i++) {
            p.purged.put(in.readUTF(), in.readLong());
        }
        n = in.readInt();
        for (int i = 0; i < n; i++) {
            String name = in.readUTF();
            ErasureClass cls = ErasureClass.valueOf(in.readUTF());
            long purged = in.readLong();
            long checked = in.readLong();
            int np = in.readInt();
            List<String> problems = new ArrayList<>();
            for (int j = 0; j < np; j++) {
                problems.add(in.readUTF());
            }
            p.surfaces.add(
                    new SurfaceOutcome(name, cls, purged, checked, problems, readNullable(in)));
        }
        n = in.readInt();
        for (int i = 0; i < n; i++) {
            p.holds.add(in.readUTF());
        }
        p.receipt = readNullable(in);
        p.note = readNullable(in);
        p.suspects = in.readInt();
        n = in.readInt();
        for (int i = 0; i < n; i++) {
            p.fences.add(hash(in));
        }
        if (version >= 2) {
            p.outcome = readNullable(in);
            p.tenantKnown = in.readBoolean();
            p.identifiers = in.readInt();
            p.ledgerEpoch = in.readInt();
        }
        if (version >= 3) {
            p.approximateAbove = in.readInt();
            p.exactProbe = in.readBoolean();
            n = in.readInt();
            for (int i = 0; i < n; i++) {
                String collection = in.readUTF();
                boolean approximate = in.readBoolean();
                String index = in.readUTF();
                String why = readNullable(in);
                int np = in.readInt();
                Map<String, Integer> params = new LinkedHashMap<>();
                for (int j = 0; j < np; j++) {
                    params.put(in.readUTF(), in.readInt());
                }
                p.probes.add(
                        new ProbeRun(
                                collection,
                                approximate,
                                index,
                                why,
                                params,
                                in.readLong(),
                                in.readLong(),
                                in.readInt()));
            }
        }
        if (version >= 4) {
            n = in.readInt();
            for (int i = 0; i < n; i++) {
                p.sought.add(new Sought(hash(in), in.readUTF()));
            }
        }
        return p;
    }

    private static KeyedHash.Hash hash(DataInputStream in) throws IOException {
        byte[] b = new byte[KeyedHash.LENGTH];
        in.readFully(b);
        return new KeyedHash.Hash(b);
    }

    private static void writeNullable(DataOutputStream out, String s) throws IOException {
        out.writeBoolean(s != null);
        if (s != null) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            out.writeInt(b.length);
            out.write(b);
        }
    }

    private static String readNullable(DataInputStream in) throws IOException {
        if (!in.readBoolean()) {
            return null;
        }
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        log.close();
    }
}
