package dev.nepenthe.cluster.internal;

import com.google.gson.JsonParseException;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.server.grpc.RoutedCall;
import dev.nepenthe.server.grpc.RoutedResult;
import dev.nepenthe.server.grpc.WriteApplier;
import io.grpc.Status;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.ProtoUtils;

/**
 * One replica's state machine: today's engine behind Ratis. A command's body never enters the Raft
 * log: {@link #startTransaction} puts only its kind there and hands the body to the state-machine
 * data path, which {@link #write}s it to the {@link PayloadJournal} (encrypted, destroyed by a
 * forget once every member holds the forget). Applying an entry runs it on this replica's store
 * through {@link WriteApplier} (the same service code a single server runs) or on the {@link
 * ClusterState}, then records it as applied. A replica whose store stops taking writes (a failed
 * write or fsync) stops applying: it throws, Ratis stops this server, and the group goes on with
 * the others; applying further entries would part it from them.
 *
 * <p>The store is durable through every applied entry, so a Raft snapshot is only a marker of the
 * applied index ({@link #takeSnapshot}); Ratis's own install is off. A replica that is new to the
 * group, or behind what the leader's log still holds, is told so by Ratis and catches up by a copy
 * of the leader's store ({@link Installer}, {@link CopySessions}), never from Ratis's files.
 */
final class NodeStateMachine extends BaseStateMachine {

    private static final System.Logger LOG = System.getLogger(NodeStateMachine.class.getName());
    private static final String FORGET = ForgetGrpc.getForgetMethod().getFullMethodName();

    /**
     * Catches this replica up by a copy of another's store, when Ratis says the log it needs is
     * gone from the leader (or it is new to the group).
     */
    interface Installer {
        /**
         * Fetches a copy from {@code source} and puts it in place of this replica's state; runs
         * while this state machine applies nothing.
         *
         * @param source the member to copy (the leader, as Ratis names it: id and address)
         * @param first the first entry the leader's log still holds: the copy must reach at least
         *     the entry before it
         * @return the last entry the installed copy holds
         */
        TermIndex install(RaftPeer source, TermIndex first) throws IOException;
    }

    private static final long INSTALL_BACKOFF_MILLIS = 1_000;

    private final Supplier<Nepenthe> store;
    private final ClusterState state;
    private final PayloadJournal journal;
    private final AppliedIndex applied;
    private final DestroyedThrough destroyedThrough;
    private final Commands commands;
    private final String self;
    private final Path clusterDir;
    private final AppliedIndex snapshot;
    private final Installer installer;
    private final Runnable removed;
    private final CopySessions copies = new CopySessions(this::image);
    private final ExecutorService installs;

    /**
     * Held while an entry is applied, a copy taken or a copy installed: each of them sees the
     * store, the cluster state and the applied index agree.
     */
    private final ReentrantLock applyLock = new ReentrantLock();

    NodeStateMachine(
            String self,
            Path clusterDir,
            Supplier<Nepenthe> store,
            ClusterState state,
            PayloadJournal journal,
            AppliedIndex applied,
            AppliedIndex snapshot,
            DestroyedThrough destroyedThrough,
            Supplier<WriteApplier> applier,
            Installer installer,
            Runnable removed) {
        this.store = store;
        this.state = state;
        this.journal = journal;
        this.applied = applied;
        this.destroyedThrough = destroyedThrough;
        this.commands = new Commands(self, clusterDir.resolve("excused"), state, applied, applier);
        this.self = self;
        this.clusterDir = clusterDir;
        this.snapshot = snapshot;
        this.installer = installer;
        this.removed = removed;
        this.installs =
                Executors.newSingleThreadExecutor(
                        r ->
                                Thread.ofPlatform()
                                        .daemon()
                                        .name("nepenthe-install-" + self)
                                        .unstarted(r));
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage)
            throws IOException {
        super.initialize(server, groupId, raftStorage);
        // Ratis pauses and reinitializes a state machine around an install, and checks that its
        // life cycle went through those states.
        getLifeCycle().transition(LifeCycle.State.STARTING);
        if (applied.index() > 0) {
            updateLastAppliedTermIndex(applied.term(), applied.index());
        }
        getLifeCycle().transition(LifeCycle.State.RUNNING);
    }

    @Override
    public void pause() {
        getLifeCycle().transition(LifeCycle.State.PAUSING);
        getLifeCycle().transition(LifeCycle.State.PAUSED);
    }

    /** After an install: the copy is in place already; Ratis takes its index from the marker. */
    @Override
    public void reinitialize() {
        getLifeCycle().transition(LifeCycle.State.STARTING);
        applyLock.lock();
        try {
            setLastAppliedTermIndex(TermIndex.valueOf(applied.term(), applied.index()));
        } finally {
            applyLock.unlock();
        }
        getLifeCycle().transition(LifeCycle.State.RUNNING);
    }

    /**
     * The store is durable through every applied entry, so a snapshot is a marker: the entries up
     * to it need never be applied here again, and Ratis may purge them from its log. The journal's
     * bodies of entries the log no longer holds (purged after the last snapshot) go with it.
     */
    @Override
    public long takeSnapshot() throws IOException {
        applyLock.lock();
        try {
            long term = applied.term();
            long index = applied.index();
            if (index > snapshot.index()) {
                snapshot.set(term, index);
            }
            long logStart = logStart();
            if (logStart > 1) {
                destroyedThrough.raise(logStart - 1);
                journal.destroyThrough(logStart - 1);
            }
            return snapshot.index();
        } finally {
            applyLock.unlock();
        }
    }

    private long logStart() {
        try {
            return getServer().get().getDivision(getGroupId()).getRaftLog().getStartIndex();
        } catch (IOException | ExecutionException | RuntimeException e) {
            return 0; // not known: nothing is purged this time
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    @Override
    public SnapshotInfo getLatestSnapshot() {
        long index = snapshot.index();
        if (index <= 0) {
            return null; // none taken: Ratis keeps the whole log
        }
        TermIndex at = TermIndex.valueOf(snapshot.term(), index);
        return new SnapshotInfo() {
            @Override
            public TermIndex getTermIndex() {
                return at;
            }

            @Override
            public List<FileInfo> getFiles() {
                return List.of(); // the store's own files; Ratis never ships them (install is ours)
            }
        };
    }

    /** Writes this replica's image for another that catches up (see {@link CopySessions}). */
    private void image(OutputStream out) throws IOException {
        applyLock.lock();
        try {
            ReplicaImage.write(
                    TermIndex.valueOf(applied.term(), applied.index()),
                    clusterDir,
                    store.get(),
                    out);
        } finally {
            applyLock.unlock();
        }
    }

    /** Runs {@code step} while no entry is applied (an install's swap). */
    <T> T whileNotApplying(IoSupplier<T> step) throws IOException {
        applyLock.lock();
        try {
            return step.get();
        } finally {
            applyLock.unlock();
        }
    }

    /** A step that may fail on storage. */
    interface IoSupplier<T> {
        T get() throws IOException;
    }

    @Override
    public CompletableFuture<TermIndex> notifyInstallSnapshotFromLeader(
            RoleInfoProto role, TermIndex first) {
        RaftPeer leader = ProtoUtils.toRaftPeer(role.getFollowerInfo().getLeaderInfo().getId());
        LOG.log(
                System.Logger.Level.INFO,
                "{0}: the leader {1} holds its log from {2} on; catching up by a copy",
                self,
                leader,
                first);
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return installer.install(leader, first);
                    } catch (IOException | RuntimeException e) {
                        LOG.log(
                                System.Logger.Level.WARNING,
                                "{0}: installing a copy from {1} failed ({2}); Ratis asks again",
                                self,
                                leader,
                                e.getMessage());
                        // Ratis asks again at once: a copy that failed is not taken again faster
                        // than this.
                        try {
                            Thread.sleep(INSTALL_BACKOFF_MILLIS);
                        } catch (InterruptedException x) {
                            Thread.currentThread().interrupt();
                        }
                        throw new CompletionException(e);
                    }
                },
                installs);
    }

    @Override
    public void notifyServerShutdown(RoleInfoProto role, boolean allServer) {
        if (!allServer) {
            // Ratis closes a division when its member learns it was removed from the group.
            removed.run();
        }
    }

    @Override
    public void close() throws IOException {
        installs.shutdownNow();
        copies.close();
        super.close();
    }

    /**
     * Ratis replays the log from the last snapshot marker on a restart and reports every entry it
     * passes; those this replica applied before are behind the applied index restored in {@link
     * #initialize}, and must not move it back.
     */
    @Override
    public void notifyTermIndexUpdated(long term, long index) {
        if (index > getLastAppliedTermIndex().getIndex()) {
            super.notifyTermIndexUpdated(term, index);
        }
    }

    @Override
    public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
        Command c;
        try {
            c = Command.decode(request.getMessage().getContent().toByteArray());
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
        return TransactionContext.newBuilder()
                .setStateMachine(this)
                .setClientRequest(request)
                .setLogData(ByteString.copyFrom(c.header()))
                .setStateMachineData(ByteString.copyFrom(c.body()))
                .build();
    }

    @Override
    public CompletableFuture<?> write(LogEntryProto entry, TransactionContext context) {
        try {
            byte[] body =
                    entry.getStateMachineLogEntry()
                            .getStateMachineEntry()
                            .getStateMachineData()
                            .toByteArray();
            if (entry.getIndex() <= destroyedThrough.index()) {
                return CompletableFuture.completedFuture(null); // applied, destroyed on purpose
            }
            if (entry.getIndex() <= journal.lastIndex()) {
                LOG.log(
                        System.Logger.Level.INFO,
                        "log index {0} written again: the journal drops what it holds from there"
                                + " (it held up to {1}; segments {2})",
                        entry.getIndex(),
                        journal.lastIndex(),
                        journal.ranges());
                // Ratis writes an index again after a restart (the journal was forced ahead of the
                // Raft log) or when a new leader overwrote this replica's uncommitted tail: what
                // the journal holds from there on is stale.
                journal.truncate(entry.getIndex());
            }
            journal.append(entry.getIndex(), body);
            if (isForget(kindOf(entry), body)) {
                // A forget closes its segment: destroying the segments up to it then destroys no
                // entry after it, and every entry before it.
                journal.roll();
            }
            return CompletableFuture.completedFuture(null);
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public CompletableFuture<ByteString> read(LogEntryProto entry, TransactionContext context) {
        try {
            Optional<byte[]> body = journal.read(entry.getIndex());
            if (body.isEmpty()) {
                return CompletableFuture.failedFuture(
                        new IOException(
                                "the payload journal no longer holds log index "
                                        + entry.getIndex()
                                        + " (destroyed by a forget every member had received)"));
            }
            return CompletableFuture.completedFuture(ByteString.copyFrom(body.get()));
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public CompletableFuture<Void> flush(long logIndex) {
        try {
            journal.flush();
            return CompletableFuture.completedFuture(null);
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public CompletableFuture<Void> truncate(long index) {
        try {
            journal.truncate(index);
            return CompletableFuture.completedFuture(null);
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public void notifyConfigurationChanged(
            long term, long index, RaftConfigurationProto newRaftConfiguration) {
        List<String> members = new ArrayList<>();
        // A joint configuration (a member added or removed) counts both sides: a forget applied
        // while it holds waits for the attestations of both.
        for (RaftPeerProto p : newRaftConfiguration.getPeersList()) {
            members.add(p.getId().toStringUtf8());
        }
        for (RaftPeerProto p : newRaftConfiguration.getOldPeersList()) {
            members.add(p.getId().toStringUtf8());
        }
        if (members.isEmpty()) {
            return; // a replica that joins hears of no configuration until it is added
        }
        // A member that sees a final configuration without itself was removed. A follower
        // removed never sees it (it learns by notifyServerShutdown); a leader removed commits it
        // and Ratis closes it without that notice. A replica that joins is not a member before
        // its first configuration, so the leader's configuration without it says nothing.
        boolean removedHere =
                state.members().contains(self)
                        && !members.contains(self)
                        && newRaftConfiguration.getOldPeersList().isEmpty();
        try {
            state.members(members.stream().distinct().sorted().toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (removedHere) {
            removed.run();
        }
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        applyLock.lock();
        try {
            return applyLocked(trx);
        } finally {
            applyLock.unlock();
        }
    }

    private CompletableFuture<Message> applyLocked(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        long index = entry.getIndex();
        if (index <= applied.index()) {
            return CompletableFuture.completedFuture(Message.EMPTY); // applied before a restart
        }
        byte[] body;
        try {
            body =
                    journal.read(index)
                            .orElseThrow(
                                    () ->
                                            new IllegalStateException(
                                                    "log index "
                                                            + index
                                                            + " is committed but its payload is"
                                                            + " not in this replica's journal"));
        } catch (IOException e) {
            throw new IllegalStateException("the payload journal failed at index " + index, e);
        }
        byte[] result;
        try {
            try {
                result =
                        commands.apply(
                                Command.Kind.of(kindOf(entry)), body, entry.getTerm(), index);
            } catch (IllegalArgumentException | JsonParseException e) {
                // A body that does not parse (a hostile or broken client of the Raft port) is
                // refused alike on every replica; it must not stop them.
                result =
                        RoutedResult.of(
                                        Status.INVALID_ARGUMENT.withDescription(
                                                "log index "
                                                        + index
                                                        + ": expected a well-formed command, got"
                                                        + " one that does not parse"))
                                .encode();
            }
            applied.set(entry.getTerm(), index);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "applying log index " + index + " failed on storage; this replica stops", e);
        }
        updateLastAppliedTermIndex(entry.getTerm(), index);
        if (!store.get().health().writesAccepted()) {
            throw new IllegalStateException(
                    "this replica's store takes no more writes (a write failed at log index "
                            + index
                            + "); it stops applying so as not to part from the group");
        }
        return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(result)));
    }

    @Override
    public CompletableFuture<Message> query(Message request) {
        ByteString content = request.getContent();
        if (content.isEmpty()) {
            // The read barrier: Ratis answers once this replica has applied up to the read index.
            return CompletableFuture.completedFuture(Message.EMPTY);
        }
        if (content.byteAt(0) == CopySessions.QUERY) {
            try {
                return CompletableFuture.completedFuture(
                        Message.valueOf(ByteString.copyFrom(copies.answer(content.toByteArray()))));
            } catch (IOException | RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        return CompletableFuture.failedFuture(
                new IOException(
                        "query: expected none (a read barrier) or a copy chunk, got "
                                + content.size()
                                + " bytes of something else"));
    }

    private static byte kindOf(LogEntryProto entry) {
        ByteString header = entry.getStateMachineLogEntry().getLogData();
        if (header.size() != 1) {
            throw new IllegalStateException(
                    "log index "
                            + entry.getIndex()
                            + ": expected a one-byte header, got "
                            + header.size()
                            + " bytes");
        }
        return header.byteAt(0);
    }

    private static boolean isForget(byte kind, byte[] body) {
        return kind == Command.Kind.WRITE.code && RoutedCall.decode(body).method().equals(FORGET);
    }
}
