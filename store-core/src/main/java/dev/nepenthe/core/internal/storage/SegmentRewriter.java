package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.crypto.DataKey;
import dev.nepenthe.core.internal.crypto.RecordCipher;
import dev.nepenthe.core.internal.record.RecordAccess;
import dev.nepenthe.core.internal.storage.LiveRecords.Live;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.roaringbitmap.RoaringBitmap;

/**
 * Writes the new segment file of a bucket a checkpoint rewrites. Each live record's sealed bytes
 * come from the log write (a record written since the last checkpoint) or from the bucket's
 * previous segment (an unchanged record), so nothing is encrypted twice; only a record with neither
 * (its copies were dropped at the open) is sealed again, from plaintext lent for the purpose and
 * wiped after.
 */
final class SegmentRewriter {
    private final Path dir;
    private final StoreContext ctx;
    private final LiveRecords live;
    private final StoredCopies copies;

    /** Lends a live record's plaintext; see {@link CollectionStorage#readPlaintextFrom}. */
    private CollectionStorage.PlaintextLender plaintext = (ord, use) -> use.apply(null);

    /**
     * The sink of the open in progress (null after it): holds the vectors a checkpoint at open
     * reseals.
     */
    private CollectionStorage.LoadSink loading;

    SegmentRewriter(Path dir, StoreContext ctx, LiveRecords live, StoredCopies copies) {
        this.dir = dir;
        this.ctx = ctx;
        this.live = live;
        this.copies = copies;
    }

    void readPlaintextFrom(CollectionStorage.PlaintextLender lender) {
        this.plaintext = lender;
    }

    /** While an open hands records to {@code sink} (null once it is done). */
    void loading(CollectionStorage.LoadSink sink) {
        this.loading = sink;
    }

    /**
     * Writes bucket {@code b}'s live records into a new segment file {@code segmentId}, or none
     * when the bucket is empty (the result's name is then null and the id unused). {@code old} is
     * the bucket's current file, or null.
     */
    StoredCopies.Rewritten rewrite(int b, String old, long segmentId) throws IOException {
        RoaringBitmap members = live.members(b);
        if (members.isEmpty()) {
            return new StoredCopies.Rewritten(b, null, new int[0], new long[0]);
        }
        Map<Integer, SealedRecord> previous = new HashMap<>();
        if (old != null) {
            for (SealedRecord r : SegmentFiles.read(dir.resolve("segments").resolve(old), b)) {
                previous.put(r.ordinal(), r);
            }
        }
        List<SealedRecord> sealed = new ArrayList<>(members.getCardinality());
        int[] ordinals = members.toArray();
        long[] offsets = new long[ordinals.length];
        long offset = SegmentFiles.FIRST_COPY;
        for (int i = 0; i < ordinals.length; i++) {
            Live l = live.get(ordinals[i]);
            SealedRecord r = copies.pending(l.ordinal());
            if (r == null || r.seq() != l.seq()) {
                r = previous.get(l.ordinal());
            }
            r = r != null && r.seq() == l.seq() ? r : reseal(l);
            sealed.add(r);
            offsets[i] = offset;
            offset += SegmentFiles.copyLength(r.sealed().length);
        }
        String name = SegmentFiles.name(b, segmentId);
        SegmentFiles.write(dir.resolve("segments").resolve(name), b, sealed, ctx.testPoints());
        return new StoredCopies.Rewritten(b, name, ordinals, offsets);
    }

    private SealedRecord reseal(Live l) {
        Function<VectorRecord, byte[]> seal =
                r -> {
                    if (r == null
                            || !ctx.hashes().record(r.tenant(), r.id()).equals(l.recordHash())) {
                        throw new IllegalStateException(
                                dir
                                        + ": the live record at ordinal "
                                        + l.ordinal()
                                        + " has no sealed copy and its plaintext is not at hand;"
                                        + " the checkpoint stops before writing a segment without"
                                        + " it");
                    }
                    byte[] plain = RecordCodec.encode(r);
                    try {
                        DataKey key = ctx.keystore().find(l.subject());
                        if (key == null) {
                            throw new IllegalStateException("live record's scope has no key");
                        }
                        return ctx.sealer()
                                .seal(
                                        key,
                                        RecordCipher.aad(l.subject(), l.recordHash(), l.seq()),
                                        plain);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    } finally {
                        Arrays.fill(plain, (byte) 0);
                    }
                };
        byte[] sealed;
        if (l.record() == null) {
            sealed = plaintext.lend(l.ordinal(), seal);
        } else if (RecordAccess.vectorUnsafe(l.record()) == null && loading != null) {
            // At open, the sink took this record's vector as its segment was decoded.
            VectorRecord whole = loading.rejoin(l.ordinal(), l.seq(), l.record());
            try {
                sealed = seal.apply(whole);
            } finally {
                Arrays.fill(RecordAccess.vectorUnsafe(whole), 0f);
            }
        } else {
            sealed = seal.apply(l.record());
        }
        return new SealedRecord(l.ordinal(), l.seq(), l.subject(), l.recordHash(), sealed);
    }
}
