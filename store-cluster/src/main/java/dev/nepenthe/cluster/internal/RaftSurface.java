package dev.nepenthe.cluster.internal;

import dev.nepenthe.core.forget.BlockedScope;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.SurfaceOutcome;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The replicated log as a surface of this replica's forgets. Its purge waits until every member of
 * the configuration at the forget's index (but those an operator excused) holds the forget's entry,
 * so no member can need an earlier body from this replica again, and then destroys the journal
 * segments up to it (their keys overwritten, the files gone). Its verify proves it: no journal
 * entry at or before the index still decrypts, and no file of the Raft storage or the journal holds
 * the bytes of a forgotten vector.
 */
final class RaftSurface implements ErasureSurface {

    static final String NAME = "cluster:replicated-log";
    private static final System.Logger LOG = System.getLogger(RaftSurface.class.getName());
    private static final long POLL_MILLIS = 100;
    private static final long MAPPING_WAIT_MILLIS = 60_000;

    private final ClusterState state;
    private final PayloadJournal journal;
    private final Supplier<Map<String, Long>> commitIndexes;
    private final List<Path> scanned;
    private final BooleanSupplier closing;
    private final DestroyedThrough destroyedThrough;

    RaftSurface(
            ClusterState state,
            PayloadJournal journal,
            DestroyedThrough destroyedThrough,
            Supplier<Map<String, Long>> commitIndexes,
            List<Path> scanned,
            BooleanSupplier closing) {
        this.state = state;
        this.journal = journal;
        this.destroyedThrough = destroyedThrough;
        this.commitIndexes = commitIndexes;
        this.scanned = List.copyOf(scanned);
        this.closing = closing;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ErasureClass erasureClass() {
        return ErasureClass.PHYSICAL;
    }

    @Override
    public void block(BlockedScope scope) {
        // Nothing is served from the log: the store's own block covers every read.
    }

    @Override
    public long purge(ForgottenRecords forgotten) throws IOException {
        ClusterForget f = replicated(forgotten.operationId());
        while (!allHold(f)) {
            if (closing.getAsBoolean()) {
                throw new IOException(
                        "the replica is closing while the forget waits for members to receive log"
                                + " index "
                                + f.index);
            }
            sleep();
        }
        int destroyed = journal.destroyThrough(f.index);
        LOG.log(
                System.Logger.Level.INFO,
                "forget {0}: destroyed {1} journal segments through log index {2}; left {3}",
                f.id,
                destroyed,
                f.index,
                journal.ranges());
        // Ratis may send this replica entries again after a restart (its log was forced behind
        // the journal); those up to here were applied and destroyed on purpose and must not be
        // written back.
        destroyedThrough.raise(f.index);
        return destroyed;
    }

    @Override
    public SurfaceOutcome verify(ForgottenRecords forgotten, long purged) throws IOException {
        ClusterForget f = replicated(forgotten.operationId());
        List<String> problems = new ArrayList<>();
        long undestroyed = 0;
        for (long i = Math.max(1, journal.firstIndex());
                i <= Math.min(f.index, journal.lastIndex());
                i++) {
            if (journal.decryptable(i)) {
                undestroyed++;
            }
        }
        if (undestroyed > 0) {
            problems.add(
                    undestroyed
                            + " journal entries at or before log index "
                            + f.index
                            + " still decrypt (segments "
                            + journal.ranges()
                            + ")");
        }
        List<byte[]> needles = new ArrayList<>();
        for (ForgottenRecords.Item item : forgotten.items()) {
            float[] v = item.vector();
            ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
            for (float x : v) {
                b.putFloat(x);
            }
            needles.add(b.array());
        }
        long files = 0;
        for (Path root : scanned) {
            for (Path file : ByteScan.files(root)) {
                files++;
                Optional<Integer> hit = ByteScan.holds(file, needles);
                if (hit.isPresent()) {
                    problems.add(
                            root.relativize(file)
                                    + " holds the vector of forgotten record #"
                                    + hit.get());
                }
            }
        }
        return new SurfaceOutcome(NAME, ErasureClass.PHYSICAL, purged, files, problems, null);
    }

    /** The replicated forget this local operation is part of; waits for the apply to map it. */
    private ClusterForget replicated(String localOperation) throws IOException {
        long deadline = System.currentTimeMillis() + MAPPING_WAIT_MILLIS;
        while (true) {
            Optional<ClusterForget> f = state.byLocal(localOperation);
            if (f.isPresent()) {
                return f.get();
            }
            if (closing.getAsBoolean() || System.currentTimeMillis() > deadline) {
                throw new IOException(
                        "operation " + localOperation + " is not part of a replicated forget");
            }
            sleep();
        }
    }

    private boolean allHold(ClusterForget f) {
        Map<String, Long> commits = commitIndexes.get();
        for (String m : f.members) {
            Long c = commits.get(m);
            if (!state.excused(f.id, m) && (c == null || c < f.index)) {
                return false;
            }
        }
        return true;
    }

    private static void sleep() throws IOException {
        try {
            Thread.sleep(POLL_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the group", e);
        }
    }
}
