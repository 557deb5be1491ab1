package dev.nepenthe.server.bench.soak;

import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.RestoreRequest;
import dev.nepenthe.grpc.v1.SnapshotRequest;
import dev.nepenthe.server.bench.soak.SoakTally.Kind;
import dev.nepenthe.server.grpc.NepentheServer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The soak of issue 47: for a set time, a real server in a JVM of its own on loopback takes writes
 * (two tenants, some replacing records), searches, deletes, forgets awaited to SEALED and snapshots
 * all at once, at bounded rates, while the harness restarts it now and then (a clean stop, or
 * SIGKILL). A model on the client side holds every acknowledged write and delete and every
 * forgotten subject; after each restart and at the end, the server is checked against it over gRPC.
 * The report (Markdown, on standard output and in {@code --out FILE}) gives the figures that must
 * be 0, the server's heap and resident set, and p50 and p99 latencies per minute per operation.
 * Exit status: 0 when every must-be-0 figure is 0 and the checks ran; 1 otherwise; 2 for bad
 * arguments.
 *
 * <pre>
 * ./nepenthe bench soak minutes=10 [--out FILE]
 * </pre>
 *
 * See {@link SoakOptions} for every argument, among them {@code fault=}: a deliberate fault that
 * the checks must catch, so that they are seen to be able to fail.
 */
public final class SoakBench {

    static final List<String> TENANTS = List.of("alpha", "beta");
    private static final int START_TIMEOUT_SECONDS = 180;
    private static final int STOP_TIMEOUT_SECONDS = 90;
    private static final long LOAD_SAMPLE_MILLIS = 5000;

    /** One server process's life: how it started, and its memory then and when it stopped. */
    record Incarnation(
            int number,
            String started,
            SoakServer.Memory atStart,
            SoakServer.Memory atStop,
            double upSeconds) {}

    /** Everything a run found; {@link #passed} says whether every must-be-0 figure is 0. */
    record Outcome(
            SoakOptions options,
            List<SoakChecker.Result> checks,
            List<Incarnation> incarnations,
            SoakTally tally,
            long servedInSearches,
            long snapshots,
            long sealed,
            int cleanStops,
            int kills,
            double loadAtStart,
            double loadAtEnd,
            double seconds,
            String aborted,
            Path dir) {

        long lost() {
            return checks.stream().mapToLong(SoakChecker.Result::lost).sum();
        }

        long resurrected() {
            return checks.stream().mapToLong(SoakChecker.Result::resurrected).sum();
        }

        long forgottenServed() {
            return checks.stream().mapToLong(SoakChecker.Result::forgottenServed).sum()
                    + servedInSearches;
        }

        long errors() {
            return tally.errors();
        }

        /** The final check ran, and nothing that must be 0 is not. */
        boolean passed() {
            return aborted == null
                    && !checks.isEmpty()
                    && checks.getLast().when().equals("end")
                    && lost() == 0
                    && resurrected() == 0
                    && forgottenServed() == 0
                    && errors() == 0;
        }
    }

    private SoakBench() {}

    public static void main(String[] args) throws Exception {
        SoakOptions o;
        try {
            o = SoakOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("soak: " + e.getMessage());
            System.exit(2);
            return;
        }
        Outcome out = run(o);
        String report = SoakReport.markdown(out);
        System.out.print(report);
        System.out.flush();
        if (o.out() != null) {
            Files.writeString(o.out(), report, StandardCharsets.UTF_8);
            System.err.println("soak: report written to " + o.out());
        }
        System.exit(out.passed() ? 0 : 1);
    }

    /**
     * Runs the soak; the run's folder is deleted when it passed and kept (for the server's log)
     * when not.
     */
    static Outcome run(SoakOptions o) throws Exception {
        Path parent =
                o.dir() != null
                        ? Files.createDirectories(o.dir())
                        : Path.of(System.getProperty("java.io.tmpdir"));
        Path dir = Files.createTempDirectory(parent, "nepenthe-soak");
        Path tokens = dir.resolve("tokens.conf");
        NepentheServer.addToken(tokens, dir.resolve("operator.token"), "default", "store-operator");
        Map<String, String> tenantTokens = new LinkedHashMap<>();
        for (String t : TENANTS) {
            NepentheServer.addToken(tokens, dir.resolve(t + ".token"), t, "tenant");
            tenantTokens.put(t, Files.readString(dir.resolve(t + ".token")).strip());
        }
        Path snapshots = Files.createDirectories(dir.resolve("snapshots"));
        SoakServer server =
                new SoakServer(
                        dir.resolve("data"),
                        dir.resolve("keys"),
                        tokens,
                        snapshots,
                        dir.resolve("server.log"),
                        o.serverHeap());
        SoakClients clients =
                new SoakClients(
                        tenantTokens, Files.readString(dir.resolve("operator.token")).strip());
        double loadAtStart = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        List<SoakChecker.Result> checks = new ArrayList<>();
        List<Incarnation> lives = new ArrayList<>();
        int[] stops = new int[2];
        String aborted = null;
        long t0 = System.nanoTime();
        SoakTally tally = new SoakTally(t0, o.bucketSeconds());
        SoakModel model = new SoakModel(o.seed(), o.dim(), TENANTS);
        ReentrantReadWriteLock gate = new ReentrantReadWriteLock(true);
        SoakWorkload workload = new SoakWorkload(o, model, clients, tally, gate, snapshots);
        SoakChecker checker = new SoakChecker(model, clients, tally, gate);
        Thread sampler =
                Thread.ofPlatform()
                        .name("soak-load")
                        .daemon()
                        .unstarted(
                                () -> {
                                    // The machine's load average every few seconds: the clients,
                                    // the server and whatever else runs.
                                    while (!Thread.currentThread().isInterrupted()) {
                                        tally.load(
                                                System.nanoTime(),
                                                ManagementFactory.getOperatingSystemMXBean()
                                                        .getSystemLoadAverage());
                                        try {
                                            Thread.sleep(LOAD_SAMPLE_MILLIS);
                                        } catch (InterruptedException e) {
                                            return;
                                        }
                                    }
                                });
        try {
            clients.connect(server.start(START_TIMEOUT_SECONDS));
            clients.collections(clients.conn())
                    .create(
                            CreateCollectionRequest.newBuilder()
                                    .setSpec(
                                            CollectionSpec.newBuilder()
                                                    .setName(SoakWorkload.COLLECTION)
                                                    .setDimension(o.dim())
                                                    .setMetric(Metric.COSINE)
                                                    .setIndexKind(o.index()))
                                    .build());
            SoakServer.Memory first = server.memory();
            long bornAt = System.nanoTime();
            String how = "first start";
            long end = t0 + (long) (o.seconds() * 1e9);
            workload.start();
            sampler.start();
            SplittableRandom rnd = new SplittableRandom(o.seed() ^ 0x5EEDL);
            SoakServer.Memory atStart = first;
            for (int restart = 0; ; restart++) {
                long at = t0 + (long) ((restart + 1) * o.restartEverySeconds() * 1e9);
                if (at >= end) {
                    break;
                }
                sleepUntil(at);
                boolean kill =
                        (o.killShare() > 0 && o.killShare() < 1 && restart < 2)
                                ? restart == 1
                                : rnd.nextDouble() < o.killShare();
                boolean rollback = o.rollback() && restart == 0;
                if (rollback) {
                    rollBack(o, server, clients, model, workload, snapshots, dir);
                    kill = false;
                }
                SoakServer.Memory atStop = server.memory();
                lives.add(
                        new Incarnation(
                                lives.size() + 1,
                                how,
                                atStart,
                                atStop,
                                (System.nanoTime() - bornAt) / 1e9));
                long down = System.nanoTime();
                clients.openWindow();
                if (kill) {
                    server.kill();
                    stops[1]++;
                } else {
                    String problem = server.stop(STOP_TIMEOUT_SECONDS);
                    if (problem != null) {
                        tally.error(Kind.RESTART, problem);
                    }
                    stops[0]++;
                }
                clients.connect(server.start(START_TIMEOUT_SECONDS));
                tally.ok(Kind.RESTART, down, System.nanoTime() - down);
                bornAt = System.nanoTime();
                how =
                        rollback
                                ? "onto a restored snapshot (fault)"
                                : kill ? "after SIGKILL" : "after a clean stop";
                atStart = server.memory();
                checks.add(
                        checker.check(
                                "after restart "
                                        + (restart + 1)
                                        + " ("
                                        + (kill
                                                ? "SIGKILL"
                                                : rollback
                                                        ? "clean stop, onto a restored snapshot:"
                                                                + " the fault"
                                                        : "clean stop")
                                        + ")"));
                System.err.println("soak: " + checks.getLast());
            }
            sleepUntil(end);
            workload.stop();
            checks.add(checker.check("end"));
            System.err.println("soak: " + checks.getLast());
            lives.add(
                    new Incarnation(
                            lives.size() + 1,
                            how,
                            atStart,
                            server.memory(),
                            (System.nanoTime() - bornAt) / 1e9));
            String problem = server.stop(STOP_TIMEOUT_SECONDS);
            if (problem != null) {
                tally.error(Kind.RESTART, problem);
            }
        } catch (IOException | RuntimeException e) {
            aborted = e.toString();
            tally.error(Kind.OTHER, "the run stopped: " + e);
        } finally {
            sampler.interrupt();
            if (aborted != null) {
                workload.abort();
            }
            if (server.alive()) {
                server.kill();
            }
            clients.close();
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        Outcome out =
                new Outcome(
                        o,
                        checks,
                        lives,
                        tally,
                        workload.servedInSearches(),
                        workload.snapshotsTaken(),
                        workload.sealed(),
                        stops[0],
                        stops[1],
                        loadAtStart,
                        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                        seconds,
                        aborted,
                        dir);
        if (out.passed()) {
            SoakWorkload.deleteTree(dir);
        } else {
            System.err.println("soak: the run's folder, with the server's log, is kept: " + dir);
        }
        return out;
    }

    /**
     * The rollback fault: a snapshot, then some more acknowledged writes, then a restore of that
     * snapshot, which the next start serves. Writes acknowledged after the snapshot are lost, and
     * the checks must say so.
     */
    private static void rollBack(
            SoakOptions o,
            SoakServer server,
            SoakClients clients,
            SoakModel model,
            SoakWorkload workload,
            Path snapshots,
            Path dir)
            throws InterruptedException, IOException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (o.replay() && !workload.replayed() && System.nanoTime() < deadline) {
            Thread.sleep(100); // the replay first, so that one run can show both faults
        }
        Path base = snapshots.resolve("rollback-base");
        clients.admin(clients.conn())
                .snapshot(SnapshotRequest.newBuilder().setTarget(base.toString()).build());
        long acked = model.ackedWrites();
        while (model.ackedWrites() < acked + 5 && System.nanoTime() < deadline + 60_000_000_000L) {
            Thread.sleep(50);
        }
        Path restored = snapshots.resolve("restored");
        clients.admin(clients.conn())
                .restore(
                        RestoreRequest.newBuilder()
                                .setSnapshot(base.toString())
                                .setTarget(restored.toString())
                                .build());
        // A served folder may not lie in a snapshot folder: move it beside the data.
        Path data = Files.move(restored, dir.resolve("data-restored"));
        server.useData(data);
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long wait;
        while ((wait = nanoTime - System.nanoTime()) > 0) {
            Thread.sleep(Math.min(wait / 1_000_000 + 1, 1000));
        }
    }
}
