package dev.nepenthe.cluster.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.protocol.TermIndex;

/**
 * A replica catching up by a copy of another's store. The copy is fetched whole into {@code
 * incoming/} while the replica goes on applying; then, while nothing is applied, the replica's
 * engine closes, the copy takes the place of its store, keystore and cluster state, the applied
 * index and the snapshot marker move to the copy's, and the engine opens on the copy (resuming any
 * forget the copy holds unfinished). A marker ({@code install-pending}) written before the first
 * file moves makes the swap finish after a crash; what it replaced is shredded.
 */
final class CopyInstall implements NodeStateMachine.Installer {

    /** The engine the install closes and opens again. */
    interface Engine {
        void close() throws IOException;

        void open() throws IOException;
    }

    private static final List<String> STORE_FOLDERS = List.of("store", "store.keys");

    private final Path data;
    private final Function<RaftPeer, RaftClient> clients;
    private final boolean groupKey;
    private final Supplier<NodeStateMachine> machine;
    private final Engine engine;
    private final ClusterState state;
    private final PayloadJournal journal;
    private final DestroyedThrough destroyed;
    private final AppliedIndex applied;
    private final AppliedIndex snapshot;

    /** Whether an install closed the engine and has not opened it again (under the apply lock). */
    private boolean engineDown;

    CopyInstall(
            Path data,
            Function<RaftPeer, RaftClient> clients,
            boolean groupKey,
            Supplier<NodeStateMachine> machine,
            Engine engine,
            ClusterState state,
            PayloadJournal journal,
            DestroyedThrough destroyed,
            AppliedIndex applied,
            AppliedIndex snapshot) {
        this.data = data;
        this.clients = clients;
        this.groupKey = groupKey;
        this.machine = machine;
        this.engine = engine;
        this.state = state;
        this.journal = journal;
        this.destroyed = destroyed;
        this.applied = applied;
        this.snapshot = snapshot;
    }

    @Override
    public TermIndex install(RaftPeer source, TermIndex first) throws IOException {
        if (!groupKey) {
            throw new IOException(
                    "catching up by a copy of "
                            + source
                            + " needs the group's master key on every replica ('cluster node"
                            + " --master-key' or NEPENTHE_MASTER_KEY); this replica has a key of"
                            + " its own, which cannot read the copy");
        }
        Path staging = data.resolve("incoming");
        Shred.tree(staging); // a copy that failed half-way before
        TermIndex got;
        // A client of its own, to the leader as Ratis names it: it may have joined after this
        // replica's configuration was written.
        try (RaftClient client = clients.apply(source);
                CopyFetch in = new CopyFetch(client, source.getId())) {
            got = ReplicaImage.read(in, staging);
        } catch (IOException | RuntimeException e) {
            Shred.tree(staging);
            throw e;
        }
        if (got.getIndex() < first.getIndex() - 1) {
            Shred.tree(staging);
            throw new IOException(
                    "the copy of "
                            + source
                            + " ends at "
                            + got
                            + ": expected it to reach the entry before "
                            + first
                            + ", where the leader's log starts");
        }
        return machine.get()
                .whileNotApplying(
                        () -> {
                            if (got.getIndex() <= applied.index()) {
                                // Applied that far already (by the log while the copy came, or
                                // by an earlier try whose engine then failed to open).
                                Shred.tree(staging);
                                reopen();
                                return TermIndex.valueOf(applied.term(), applied.index());
                            }
                            Durable.write(
                                    pending(data), got.getTerm() + " " + got.getIndex() + "\n");
                            if (!engineDown) {
                                engineDown = true;
                                engine.close();
                            }
                            swap(data);
                            state.reload();
                            record(got);
                            finish(data);
                            reopen();
                            return got;
                        });
    }

    /** Opens the engine if an install closed it (a failed open is tried again by the next try). */
    private void reopen() throws IOException {
        if (engineDown) {
            engine.open();
            engineDown = false;
        }
    }

    /** The marker of a swap begun; holds the copy's term and index. */
    static Path pending(Path data) {
        return data.resolve("cluster").resolve("install-pending");
    }

    /** The (term, index) a begun swap installs, or null when none was begun. */
    static TermIndex pendingIndex(Path data) throws IOException {
        Path p = pending(data);
        if (!Files.exists(p)) {
            return null;
        }
        String[] parts = Files.readString(p, StandardCharsets.UTF_8).strip().split(" ", -1);
        try {
            if (parts.length != 2) {
                throw new IllegalArgumentException("expected two numbers");
            }
            return TermIndex.valueOf(Long.parseLong(parts[0]), Long.parseLong(parts[1]));
        } catch (RuntimeException e) {
            throw new IOException(p + ": expected 'term index', got something else", e);
        }
    }

    /**
     * Moves the fetched copy in place of the store, keystore and cluster files; the replaced ones
     * wait beside them (*.replaced) until {@link #finish}. Safe to run again after a crash.
     */
    static void swap(Path data) throws IOException {
        Path staging = data.resolve("incoming");
        for (String name : STORE_FOLDERS) {
            Path in = staging.resolve(name);
            if (!Files.exists(in)) {
                continue; // moved before a crash
            }
            Path live = data.resolve(name);
            Path old = data.resolve(name + ".replaced");
            if (Files.exists(live)) {
                if (Files.exists(old)) {
                    Shred.tree(live); // a half-finished move of an earlier attempt
                } else {
                    Files.move(live, old, StandardCopyOption.ATOMIC_MOVE);
                }
            }
            Path key = old.resolve("master.key");
            if (name.equals("store.keys") && Files.exists(key)) {
                // A group key kept in the keystore folder stays with the replica: a copy never
                // carries one.
                Files.copy(key, in.resolve("master.key"), StandardCopyOption.REPLACE_EXISTING);
                Durable.force(in.resolve("master.key"));
            }
            Files.move(in, live, StandardCopyOption.ATOMIC_MOVE);
        }
        Path cluster = staging.resolve("cluster");
        for (String name : ReplicaImage.CLUSTER_FILES) {
            Path f = cluster.resolve(name);
            if (Files.exists(f)) {
                Files.move(
                        f,
                        data.resolve("cluster").resolve(name),
                        StandardCopyOption.REPLACE_EXISTING,
                        StandardCopyOption.ATOMIC_MOVE);
            }
        }
        Durable.forceDirectory(data.resolve("cluster"));
        Durable.forceDirectory(data);
    }

    /**
     * Makes the journal, the applied index and the snapshot marker agree with an installed copy
     * that holds every entry through {@code at}. Safe to run again.
     */
    void record(TermIndex at) throws IOException {
        record(at, journal, destroyed, applied, snapshot);
    }

    static void record(
            TermIndex at,
            PayloadJournal journal,
            DestroyedThrough destroyed,
            AppliedIndex applied,
            AppliedIndex snapshot)
            throws IOException {
        // Bodies through the copy's index are in the copy; those after it are still to apply.
        journal.destroyThrough(at.getIndex());
        destroyed.raise(at.getIndex());
        if (applied.index() < at.getIndex()) {
            applied.set(at.getTerm(), at.getIndex());
        }
        if (snapshot.index() < at.getIndex()) {
            snapshot.set(at.getTerm(), at.getIndex());
        }
    }

    /** Shreds what the copy replaced and the staging folder, then drops the marker. */
    static void finish(Path data) throws IOException {
        for (String name : STORE_FOLDERS) {
            Shred.tree(data.resolve(name + ".replaced"));
        }
        Shred.tree(data.resolve("incoming"));
        Files.deleteIfExists(pending(data));
        Durable.forceDirectory(data.resolve("cluster"));
    }
}
