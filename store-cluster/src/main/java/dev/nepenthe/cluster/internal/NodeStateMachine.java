package dev.nepenthe.cluster.internal;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.server.grpc.RoutedCall;
import dev.nepenthe.server.grpc.RoutedResult;
import dev.nepenthe.server.grpc.WriteApplier;
import io.grpc.Status;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * One replica's state machine: today's engine behind Ratis. A command's body never enters the Raft
 * log: {@link #startTransaction} puts only its kind there and hands the body to the state-machine
 * data path, which {@link #write}s it to the {@link PayloadJournal} (encrypted, destroyed by a
 * forget once every member holds the forget). Applying an entry runs it on this replica's store
 * through {@link WriteApplier} (the same service code a single server runs) or on the {@link
 * ClusterState}, then records it as applied. A replica whose store stops taking writes (a failed
 * write or fsync) stops applying: it throws, Ratis stops this server, and the group goes on with
 * the others; applying further entries would part it from them.
 */
final class NodeStateMachine extends BaseStateMachine {

    private static final System.Logger LOG = System.getLogger(NodeStateMachine.class.getName());
    private static final String FORGET = ForgetGrpc.getForgetMethod().getFullMethodName();

    private final Nepenthe store;
    private final ClusterState state;
    private final PayloadJournal journal;
    private final AppliedIndex applied;
    private final DestroyedThrough destroyedThrough;
    private final Supplier<WriteApplier> applier;
    private final String self;
    private final Path excusedMarker;
    private long entryTerm;

    NodeStateMachine(
            String self,
            Path excusedMarker,
            Nepenthe store,
            ClusterState state,
            PayloadJournal journal,
            AppliedIndex applied,
            DestroyedThrough destroyedThrough,
            Supplier<WriteApplier> applier) {
        this.store = store;
        this.state = state;
        this.journal = journal;
        this.applied = applied;
        this.destroyedThrough = destroyedThrough;
        this.applier = applier;
        this.self = self;
        this.excusedMarker = excusedMarker;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage)
            throws IOException {
        super.initialize(server, groupId, raftStorage);
        if (applied.index() > 0) {
            updateLastAppliedTermIndex(applied.term(), applied.index());
        }
    }

    /**
     * Ratis replays the log from its start on a restart (this state machine takes no Raft snapshots
     * yet) and reports every entry it passes; those this replica applied before are behind the
     * applied index restored in {@link #initialize}, and must not move it back.
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
        for (RaftPeerProto p : newRaftConfiguration.getPeersList()) {
            members.add(p.getId().toStringUtf8());
        }
        try {
            state.members(members.stream().sorted().toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
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
        entryTerm = entry.getTerm();
        try {
            try {
                result = apply(Command.Kind.of(kindOf(entry)), body, index);
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
        if (!store.health().writesAccepted()) {
            throw new IllegalStateException(
                    "this replica's store takes no more writes (a write failed at log index "
                            + index
                            + "); it stops applying so as not to part from the group");
        }
        return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(result)));
    }

    private byte[] apply(Command.Kind kind, byte[] body, long index) throws IOException {
        return switch (kind) {
            case WRITE -> applyWrite(RoutedCall.decode(body), index).encode();
            case ATTEST -> {
                JsonObject o = object(body);
                Attestation a =
                        new Attestation(
                                field(o, "group"),
                                field(o, "operation"),
                                Long.parseLong(field(o, "index")),
                                field(o, "node"),
                                field(o, "state"),
                                field(o, "localReceipt"),
                                field(o, "signature"));
                yield done(state.attest(a, index));
            }
            case JOIN -> {
                JsonObject o = object(body);
                state.join(field(o, "node"), field(o, "nodeKey"), field(o, "storeKey"), index);
                yield done(Optional.empty());
            }
            case EXCUSE -> {
                JsonObject o = object(body);
                String node = field(o, "node");
                Optional<String> refused =
                        state.excuse(field(o, "operation"), node, field(o, "reason"), index);
                if (refused.isEmpty() && node.equals(self)) {
                    // This replica was excused: its files may hold what the group forgot without
                    // it. It stops here and refuses to start until its folder is wiped.
                    Durable.write(excusedMarker, o.toString());
                    applied.set(entryTerm, index);
                    throw new IllegalStateException(
                            "this replica was excused from forget "
                                    + field(o, "operation")
                                    + "; it stops, and starts again only from a wiped folder");
                }
                yield done(refused);
            }
        };
    }

    private RoutedResult applyWrite(RoutedCall call, long index) throws IOException {
        RoutedResult r = applier.get().apply(call);
        if (!call.method().equals(FORGET) || !r.ok()) {
            return r;
        }
        Operation local;
        try {
            local = Operation.parseFrom(r.response());
        } catch (InvalidProtocolBufferException e) {
            return RoutedResult.of(
                    Status.INTERNAL.withDescription("a forget's answer did not parse"));
        }
        ClusterForget f = state.forgetApplied(index, call.tenant(), local.getId());
        return new RoutedResult(0, "", local.toBuilder().setId(f.id).build().toByteArray());
    }

    private static JsonObject object(byte[] body) {
        JsonElement e = JsonParser.parseString(utf8(body));
        if (!e.isJsonObject()) {
            throw new IllegalArgumentException("expected a JSON object");
        }
        return e.getAsJsonObject();
    }

    private static String field(JsonObject o, String name) {
        JsonElement e = o.get(name);
        if (e == null || !e.isJsonPrimitive()) {
            throw new IllegalArgumentException("expected a field '" + name + "'");
        }
        return e.getAsString();
    }

    private static byte[] done(Optional<String> refusal) {
        return refusal.map(why -> RoutedResult.of(Status.FAILED_PRECONDITION.withDescription(why)))
                .orElseGet(() -> new RoutedResult(0, "", new byte[0]))
                .encode();
    }

    @Override
    public CompletableFuture<Message> query(Message request) {
        // The read barrier: Ratis answers once this replica has applied up to the read index.
        return CompletableFuture.completedFuture(Message.EMPTY);
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

    private static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
