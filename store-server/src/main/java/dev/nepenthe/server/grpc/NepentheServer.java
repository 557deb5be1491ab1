package dev.nepenthe.server.grpc;

import dev.nepenthe.cache.QueryCache;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.embed.LazyEmbedder;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The gRPC server in front of one store: the four Nepenthe services behind the bearer-token
 * interceptor and the {@link CallLimiter}, plus the standard health and reflection services.
 * Handlers run on a fixed pool of {@link Limits.Calls#handlerThreads()} threads; the bytes of
 * requests still arriving are bounded by {@link InboundBudget}. {@link #close} shuts down
 * gracefully: health turns NOT_SERVING, new calls are refused, calls in flight get {@link
 * Limits#shutdownGraceSeconds()} to finish before they are cancelled, and then the store is closed
 * (its forget worker finishes its phase; the log is already durable).
 */
public final class NepentheServer implements Closeable {

    private static final System.Logger LOG = System.getLogger(NepentheServer.class.getName());

    /** The flag that lets a server without TLS listen beyond loopback; named in the refusal. */
    public static final String INSECURE_PLAINTEXT_FLAG = "--insecure-plaintext-on-network";

    /**
     * The health service's name for writes: NOT_SERVING while the store is read-only after a failed
     * write ({@code ServerStats.write_problem} says why, to a store operator).
     */
    public static final String WRITES_HEALTH = "nepenthe.v1.Writes";

    private final Server server;
    private final Nepenthe store;
    private final HealthStatusManager health;
    private final Limits limits;
    private final boolean closeStore;
    private final ExecutorService handlers;
    private final ScheduledExecutorService timer;
    final CallLimiter limiter;
    final InboundBudget budget;
    private final WriteApplier applier;

    private NepentheServer(
            Server server,
            Nepenthe store,
            HealthStatusManager health,
            Limits limits,
            boolean closeStore,
            ExecutorService handlers,
            ScheduledExecutorService timer,
            CallLimiter limiter,
            InboundBudget budget,
            WriteApplier applier) {
        this.server = server;
        this.store = store;
        this.health = health;
        this.limits = limits;
        this.closeStore = closeStore;
        this.handlers = handlers;
        this.timer = timer;
        this.limiter = limiter;
        this.budget = budget;
        this.applier = applier;
    }

    /** How to start a server; see {@link #start}. */
    public static final class Options {
        String host = "127.0.0.1";
        int port = 7707;
        Path tokensFile;
        Path tlsCert;
        Path tlsKey;
        List<Path> snapshotDirs = List.of();
        boolean insecurePlaintextOnNetwork;
        Limits limits = Limits.DEFAULTS;
        Replication replication;

        // Call limits set by callsInFlight, receivingBytes and timeouts (null: the limits' own);
        // effectiveLimits() puts them in.
        private int[] inFlight;
        private long[] receiving;
        private int[] timeouts;

        /** The address to listen on; loopback unless told otherwise. */
        public Options listen(String host, int port) {
            this.host = host;
            this.port = port;
            return this;
        }

        /** The tokens file (hashes only; see {@link Tokens}). */
        public Options tokens(Path file) {
            this.tokensFile = file;
            return this;
        }

        /**
         * The folders snapshots and restores over gRPC may use (created if missing; none may hold
         * or lie in the data or keystore folder). With none, both calls are refused.
         */
        public Options snapshotDirs(List<Path> folders) {
            this.snapshotDirs = List.copyOf(folders);
            return this;
        }

        /** TLS from a PEM certificate chain and PEM PKCS#8 private key; plaintext when not set. */
        public Options tls(Path certChain, Path privateKey) {
            this.tlsCert = certChain;
            this.tlsKey = privateKey;
            return this;
        }

        /**
         * Lets a server without TLS listen on an address other than loopback. Its bearer tokens,
         * and every vector and record, then cross the network in clear text: for a network the
         * operator trusts end to end (a TLS-terminating sidecar on the same host, say).
         */
        public Options insecurePlaintextOnNetwork(boolean allow) {
            this.insecurePlaintextOnNetwork = allow;
            return this;
        }

        /**
         * Makes the server one replica of several: its writes are handed to {@code r}, which orders
         * them and runs them on every replica through each one's {@link #applier()}, and its reads
         * wait for {@code r} (see {@link Replication}). A restore is refused.
         */
        public Options replication(Replication r) {
            this.replication = r;
            return this;
        }

        Options limits(Limits l) {
            this.limits = l;
            this.inFlight = null;
            this.receiving = null;
            this.timeouts = null;
            return this;
        }

        /** The query cache's bounds: most results and most bytes (0 results: no cache). */
        public Options queryCache(int entries, long bytes) {
            this.limits = limits.withCache(entries, bytes);
            return this;
        }

        /**
         * Most calls in flight at once: over all callers, for one tenant, for one token (see {@link
         * Limits.Calls}). The server runs handlers on {@code total} + 4 threads.
         */
        public Options callsInFlight(int total, int perTenant, int perToken) {
            this.inFlight = new int[] {total, perTenant, perToken};
            effectiveLimits(); // refuses bad values now, not at start
            return this;
        }

        /** Most bytes of request messages still arriving, over all calls and for one tenant. */
        public Options receivingBytes(long total, long perTenant) {
            this.receiving = new long[] {total, perTenant};
            effectiveLimits();
            return this;
        }

        /**
         * How long a call may wait for its client's next request message, and connections' idle
         * time, age and grace after it (0: never).
         */
        public Options timeouts(
                int requestIdleSeconds,
                int connectionIdleSeconds,
                int connectionAgeSeconds,
                int connectionAgeGraceSeconds) {
            this.timeouts =
                    new int[] {
                        requestIdleSeconds,
                        connectionIdleSeconds,
                        connectionAgeSeconds,
                        connectionAgeGraceSeconds
                    };
            effectiveLimits();
            return this;
        }

        /** The limits with the call limits set here in place of theirs: one place builds them. */
        Limits effectiveLimits() {
            Limits.Calls c = limits.calls();
            return limits.withCalls(
                    new Limits.Calls(
                            inFlight == null ? c.inFlight() : inFlight[0],
                            inFlight == null ? c.inFlightPerTenant() : inFlight[1],
                            inFlight == null ? c.inFlightPerToken() : inFlight[2],
                            receiving == null ? c.receivingBytes() : receiving[0],
                            receiving == null ? c.receivingBytesPerTenant() : receiving[1],
                            timeouts == null ? c.requestIdleSeconds() : timeouts[0],
                            timeouts == null ? c.connectionIdleSeconds() : timeouts[1],
                            timeouts == null ? c.connectionAgeSeconds() : timeouts[2],
                            timeouts == null ? c.connectionAgeGraceSeconds() : timeouts[3],
                            c.keepAlivePermitSeconds(),
                            c.streamsPerConnection()));
        }
    }

    /**
     * The options a served store is opened with: these plus the embedders the server bundles, today
     * all-MiniLM-L6-v2 ({@code "all-minilm-l6-v2"}, 384 dimensions), so that collections created
     * with {@code embedder: "all-minilm-l6-v2"} take text-only records and text queries. The model
     * loads on the first embedding, not here: a server that never embeds starts as fast as before
     * and never pays the model's heap (figures in docs/BENCHMARKS.md).
     *
     * @param options the store's other options
     * @return the options with the bundled embedders
     */
    public static StoreOptions withBundledEmbedders(StoreOptions options) {
        return options.withEmbedder(LazyEmbedder.miniLm());
    }

    /**
     * Starts a server over an open store; closing the server closes the store. Open the store with
     * {@link #withBundledEmbedders} for collections that embed text.
     *
     * @throws IOException if the port cannot be bound or the tokens or TLS files cannot be read
     * @throws IllegalArgumentException if the tokens file is malformed (the message names the line)
     *     or open to others, or a snapshot folder overlaps the data or keystore folder
     */
    public static NepentheServer start(Nepenthe store, Options o) throws IOException {
        if (o.tokensFile == null) {
            throw new IllegalArgumentException("server: expected a tokens file, got none");
        }
        checkPlaintext(o.host, o.tlsCert != null, o.insecurePlaintextOnNetwork);
        TokensFile tokens = new TokensFile(o.tokensFile);
        SnapshotFolders folders =
                o.snapshotDirs.isEmpty()
                        ? SnapshotFolders.none()
                        : SnapshotFolders.of(
                                o.snapshotDirs, store.folder(), store.ledgerFile().getParent());
        NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress(o.host, o.port));
        if (o.tlsCert != null) {
            SslContext ssl =
                    GrpcSslContexts.forServer(o.tlsCert.toFile(), o.tlsKey.toFile()).build();
            b.sslContext(ssl);
        }
        Limits limits = o.effectiveLimits();
        Limits.Calls c = limits.calls();
        // Connections: idle ones closed, old ones asked to reconnect (their calls get the grace),
        // pings no more often than permitted, and a bound on the streams one may hold open.
        if (c.connectionIdleSeconds() > 0) {
            b.maxConnectionIdle(c.connectionIdleSeconds(), TimeUnit.SECONDS);
        }
        if (c.connectionAgeSeconds() > 0) {
            b.maxConnectionAge(c.connectionAgeSeconds(), TimeUnit.SECONDS)
                    .maxConnectionAgeGrace(c.connectionAgeGraceSeconds(), TimeUnit.SECONDS);
        }
        b.permitKeepAliveTime(c.keepAlivePermitSeconds(), TimeUnit.SECONDS)
                .maxConcurrentCallsPerConnection(c.streamsPerConnection());
        return start(b, store, tokens::current, limits, folders, true, o.replication);
    }

    /**
     * Refuses plaintext beyond loopback: without TLS every bearer token crosses the network in
     * clear text, so a server that is not on a loopback address needs TLS or the operator's
     * explicit {@value #INSECURE_PLAINTEXT_FLAG}.
     *
     * @param host the address the server is to listen on, as the operator gave it
     * @param tls whether the server has TLS
     * @param insecurePlaintextOnNetwork whether the operator accepted plaintext beyond loopback
     * @throws IllegalArgumentException if the server would listen in plaintext beyond loopback
     * @throws IOException if the host does not resolve
     */
    public static void checkPlaintext(String host, boolean tls, boolean insecurePlaintextOnNetwork)
            throws IOException {
        if (tls || insecurePlaintextOnNetwork) {
            return;
        }
        InetAddress address = InetAddress.getByName(host);
        if (!address.isLoopbackAddress()) {
            throw new IllegalArgumentException(
                    "--host "
                            + host
                            + ": expected a loopback address for a server without"
                            + " TLS, got "
                            + address.getHostAddress()
                            + ", where bearer tokens and records would cross the"
                            + " network in clear text. Give --tls-cert and --tls-key, or pass "
                            + INSECURE_PLAINTEXT_FLAG
                            + " to serve plaintext on the network anyway");
        }
    }

    /**
     * A server on a builder the caller made (in-process tests), with fixed tokens and no snapshot
     * folders.
     */
    static NepentheServer start(
            ServerBuilder<?> b, Nepenthe store, Tokens tokens, Limits limits, boolean closeStore)
            throws IOException {
        return start(b, store, () -> tokens, limits, SnapshotFolders.none(), closeStore);
    }

    /** A server on a builder the caller made; {@code closeStore} says who closes the store. */
    static NepentheServer start(
            ServerBuilder<?> b,
            Nepenthe store,
            Supplier<Tokens> tokens,
            Limits limits,
            SnapshotFolders folders,
            boolean closeStore)
            throws IOException {
        return start(b, store, tokens, limits, folders, closeStore, null);
    }

    /** As above, one replica of several when {@code replication} is not null. */
    static NepentheServer start(
            ServerBuilder<?> b,
            Nepenthe store,
            Supplier<Tokens> tokens,
            Limits limits,
            SnapshotFolders folders,
            boolean closeStore,
            Replication replication)
            throws IOException {
        HealthStatusManager health = new HealthStatusManager();
        AuthInterceptor auth = new AuthInterceptor(tokens);
        Limits.Calls calls = limits.calls();
        ExecutorService handlers =
                Executors.newFixedThreadPool(
                        calls.handlerThreads(), daemonThreads("nepenthe-grpc-"));
        ScheduledExecutorService timer =
                Executors.newSingleThreadScheduledExecutor(daemonThreads("nepenthe-grpc-idle-"));
        CallLimiter limiter = new CallLimiter(calls, timer);
        InboundBudget budget =
                new InboundBudget(calls.receivingBytes(), calls.receivingBytesPerTenant());
        b.executor(handlers).addStreamTracerFactory(budget);
        StreamSlots slots = new StreamSlots(limits.maxStreamsPerCaller());
        QueryCache cache = null;
        if (limits.cacheEntries() > 0) {
            // A surface of the store's forgets from here on: a forget evicts, purges and proves it.
            cache = new QueryCache(limits.cacheEntries(), limits.cacheBytes());
            store.registerSurface(cache);
        }
        List<BindableService> services =
                List.of(
                        new CollectionsService(store, limits, cache),
                        new RecordsService(store, limits, slots, cache),
                        new ForgetService(store, slots, limits),
                        new AdminService(store, cache, folders));
        b.maxInboundMessageSize(limits.maxMessageBytes());
        List<ServerServiceDefinition> bound = new ArrayList<>();
        for (BindableService s : services) {
            ServerServiceDefinition def = s.bindService();
            bound.add(def);
            ServerServiceDefinition inner = RequestParsing.withClearParseErrors(def);
            if (replication != null) {
                inner =
                        ServerInterceptors.intercept(
                                inner, new ReplicationInterceptor(replication, slots));
            }
            // The auth interceptor outermost, then the limiter (it counts by caller); a request
            // that did not parse is refused next, before a replica hands a write on.
            b.addService(
                    ServerInterceptors.intercept(
                            ServerInterceptors.intercept(
                                    ServerInterceptors.intercept(
                                            inner, RequestParsing.REFUSE_UNPARSED),
                                    limiter),
                            auth));
        }
        b.addService(health.getHealthService());
        b.addService(ProtoReflectionServiceV1.newInstance());
        Server server;
        try {
            server = b.build().start();
        } catch (IOException | RuntimeException e) {
            handlers.shutdownNow();
            timer.shutdownNow();
            throw e;
        }
        health.setStatus("", ServingStatus.SERVING);
        watchWrites(store, health, timer);
        for (BindableService s : services) {
            health.setStatus(
                    s.bindService().getServiceDescriptor().getName(), ServingStatus.SERVING);
        }
        return new NepentheServer(
                server,
                store,
                health,
                limits,
                closeStore,
                handlers,
                timer,
                limiter,
                budget,
                new WriteApplier(bound));
    }

    /**
     * Keeps {@value #WRITES_HEALTH} in the health service as the store is: NOT_SERVING once a write
     * to its files has failed and the store is read-only (searches and gets go on, so the server
     * and its services stay SERVING). Checked every second: the latch is one volatile read.
     */
    private static void watchWrites(
            Nepenthe store, HealthStatusManager health, ScheduledExecutorService timer) {
        // The task catches what it throws and runs until the timer is shut down: nothing to wait
        // for or cancel on the future.
        ScheduledFuture<?> _ =
                timer.scheduleWithFixedDelay(
                        () -> {
                            try {
                                boolean writes = store.health().writesAccepted();
                                health.setStatus(
                                        WRITES_HEALTH,
                                        writes ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
                            } catch (RuntimeException e) {
                                // The store is closing: the server's own close sets the terminal
                                // state.
                            }
                        },
                        0,
                        1,
                        TimeUnit.SECONDS);
    }

    private static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * A first token for a new server: one for the default tenant with the store-operator role, its
     * hash written to {@code tokensFile} and the token itself to {@code tokenFile}, both readable
     * by the owner only (see {@link Tokens}).
     *
     * @throws IOException if either file cannot be written
     */
    public static void bootstrapTokens(Path tokensFile, Path tokenFile) throws IOException {
        Tokens.bootstrap(tokensFile, tokenFile, VectorRecord.DEFAULT_TENANT);
    }

    /**
     * A new token for {@code tenant}: its hash appended to the tokens file, the token itself
     * written to the new file {@code tokenFile}, owner-only (see {@link Tokens}). A running server
     * accepts it from its next call on.
     *
     * @param role {@code tenant}, {@code tenant-admin} or {@code store-operator}
     * @throws IllegalArgumentException if the tenant name is not a plain name, the role unknown,
     *     the token file exists, or the tokens file does not parse (naming the line)
     * @throws IOException if a file cannot be written
     */
    public static void addToken(Path tokensFile, Path tokenFile, String tenant, String role)
            throws IOException {
        Role r = Role.named(role);
        if (r == null) {
            throw new IllegalArgumentException(
                    "role: expected " + Role.NAMES + ", got '" + role + "'");
        }
        Tokens.add(tokensFile, tokenFile, tenant, r);
    }

    /** A tenant token, or a store operator's: {@link #addToken(Path, Path, String, String)}. */
    public static void addToken(Path tokensFile, Path tokenFile, String tenant, boolean operator)
            throws IOException {
        addToken(tokensFile, tokenFile, tenant, operator ? "store-operator" : "tenant");
    }

    /**
     * Runs write calls on this server's store through its own services, for a {@link Replication}
     * that ordered them (see {@link Options#replication}).
     *
     * @return the applier over this server's services
     */
    public WriteApplier applier() {
        return applier;
    }

    /** The port the server listens on (the one it was given, or the one the system chose for 0). */
    public int port() {
        return server.getPort();
    }

    /** Blocks until the server has terminated. */
    public void awaitTermination() throws InterruptedException {
        server.awaitTermination();
    }

    @Override
    public void close() throws IOException {
        health.enterTerminalState();
        server.shutdown();
        try {
            if (!server.awaitTermination(limits.shutdownGraceSeconds(), TimeUnit.SECONDS)) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "calls still in flight after {0} s; cancelling them",
                        limits.shutdownGraceSeconds());
                server.shutdownNow();
                server.awaitTermination(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        } finally {
            handlers.shutdownNow();
            timer.shutdownNow();
            if (closeStore) {
                store.close();
            }
        }
    }
}
