package dev.nepenthe.server.cli;

import dev.nepenthe.grpc.v1.ClusterStatus;
import dev.nepenthe.grpc.v1.ClusterStatusRequest;
import dev.nepenthe.grpc.v1.CollectionInfo;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.DescribeCollectionRequest;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.ListCollectionsRequest;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.PublicKeyRequest;
import dev.nepenthe.grpc.v1.ReplicaStatus;
import dev.nepenthe.grpc.v1.ServerStatsRequest;
import dev.nepenthe.server.Main;
import dev.nepenthe.server.grpc.NepentheServer;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe status}: is the server serving, what does it hold for this token, how is a forget
 * doing.
 */
@Command(
        name = "status",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Show a server's health (the standard gRPC health service), for a replica of a cluster"
                + " and a store operator's token the group (leader, term, each member's role,"
                + " commit index and lag), and its collections with the number of records the"
                + " token's tenant has in each; with --operation, one forget operation's state,"
                + " timeline, surfaces and suspects instead of the collections. --public-key-out"
                + " saves the key receipts verify with.",
            "Exit 0 when the server is serving (and the operation, if asked, is SEALED or still"
                + " under way), 1 when it is not serving or the operation needs review or is held."
        })
public final class StatusCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Mixin ServerConnection connection;

    @Option(
            names = "--operation",
            paramLabel = "ID",
            description = "A forget operation of this token's tenant.")
    String operation;

    @Option(
            names = "--public-key-out",
            paramLabel = "PEM",
            description =
                    "Also write the store's public key here (what verify-receipt and verify-ledger"
                            + " check with).")
    Path publicKeyOut;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        try (ServerConnection.Client client = connection.connect()) {
            HealthCheckResponse.ServingStatus health =
                    client.health().check(HealthCheckRequest.getDefaultInstance()).getStatus();
            out.println("server " + connection.server + ": " + health);
            if (health != HealthCheckResponse.ServingStatus.SERVING) {
                return Main.DOES_NOT_HOLD;
            }
            HealthCheckResponse.ServingStatus writes =
                    client.health()
                            .check(
                                    HealthCheckRequest.newBuilder()
                                            .setService(NepentheServer.WRITES_HEALTH)
                                            .build())
                            .getStatus();
            if (writes != HealthCheckResponse.ServingStatus.SERVING) {
                out.println(
                        "writes: "
                                + writes
                                + ": the store is read-only after a failed write; searches go on. "
                                + writeProblem(client));
            }
            cluster(client, out);
            if (publicKeyOut != null) {
                Files.writeString(
                        publicKeyOut,
                        client.forget()
                                .getPublicKey(PublicKeyRequest.getDefaultInstance())
                                .getPem(),
                        StandardCharsets.UTF_8);
                out.println("public key written to " + publicKeyOut);
            }
            if (operation != null) {
                Operation op =
                        client.forget()
                                .getOperation(
                                        GetOperationRequest.newBuilder().setId(operation).build());
                out.println(
                        OperationReport.heading(op) + " (scope hash " + op.getScopeHash() + ")");
                OperationReport report = new OperationReport(out);
                report.states(op);
                out.println();
                report.details(op);
                out.println(
                        op.getReceipt().isEmpty()
                                ? "receipt: none yet"
                                : "receipt: issued ("
                                        + "'nepenthe forget' with the same --key prints it again)");
                boolean fine =
                        (!op.getSettled() || op.getState().equals("SEALED"))
                                && writes == HealthCheckResponse.ServingStatus.SERVING;
                return fine ? 0 : Main.DOES_NOT_HOLD;
            }
            List<CollectionInfo> infos = new ArrayList<>();
            for (CollectionSpec s :
                    client.collections()
                            .list(ListCollectionsRequest.getDefaultInstance())
                            .getCollectionsList()) {
                infos.add(
                        client.collections()
                                .describe(
                                        DescribeCollectionRequest.newBuilder()
                                                .setName(s.getName())
                                                .build()));
            }
            int code = writes == HealthCheckResponse.ServingStatus.SERVING ? 0 : Main.DOES_NOT_HOLD;
            if (infos.isEmpty()) {
                out.println("no collections");
                return code;
            }
            int w =
                    Math.max(
                            "collection".length(),
                            infos.stream()
                                    .mapToInt(i -> i.getSpec().getName().length())
                                    .max()
                                    .orElse(0));
            String row = "%-" + w + "s  %9s  %-6s  %-6s  %12s  %s%n";
            out.printf(
                    Locale.ROOT,
                    row,
                    "collection",
                    "dimension",
                    "metric",
                    "index",
                    "your records",
                    "text");
            for (CollectionInfo i : infos) {
                CollectionSpec s = i.getSpec();
                out.printf(
                        Locale.ROOT,
                        row,
                        s.getName(),
                        s.getDimension(),
                        s.getMetric().name().toLowerCase(Locale.ROOT),
                        s.getIndexKind(),
                        String.format(Locale.ROOT, "%,d", i.getSize()),
                        text(s));
            }
            return code;
        }
    }

    /**
     * The replica group, when the server is one member of a cluster: who leads in which term and
     * how far behind each member is. Printed for a store operator's token only; a single node, or
     * another role, prints nothing.
     */
    private static void cluster(ServerConnection.Client client, PrintWriter out) {
        ClusterStatus c;
        try {
            c = client.admin().getClusterStatus(ClusterStatusRequest.getDefaultInstance());
        } catch (StatusRuntimeException e) {
            return;
        }
        out.printf(
                Locale.ROOT,
                "cluster %s: this is %s; leader %s, term %d%n",
                c.getGroup(),
                c.getSelf(),
                c.getLeader().isEmpty() ? "none" : c.getLeader(),
                c.getTerm());
        out.printf(
                Locale.ROOT,
                "  %-8s  %-9s  %-21s  %8s  %6s  %s%n",
                "member",
                "role",
                "raft",
                "commit",
                "lag",
                "last heard");
        for (ReplicaStatus r : c.getReplicasList()) {
            out.printf(
                    Locale.ROOT,
                    "  %-8s  %-9s  %-21s  %8s  %6s  %s%n",
                    r.getId(),
                    r.getRole(),
                    r.getRaftAddress(),
                    r.getCommitIndex() < 0 ? "?" : Long.toString(r.getCommitIndex()),
                    r.getLag() < 0 ? "?" : Long.toString(r.getLag()),
                    r.getLastContactMillis() < 0 ? "-" : r.getLastContactMillis() + " ms ago");
        }
    }

    /**
     * Why writes are refused, as the server tells this token's role (a plain tenant is not told).
     */
    private static String writeProblem(ServerConnection.Client client) {
        try {
            String p =
                    client.admin().stats(ServerStatsRequest.getDefaultInstance()).getWriteProblem();
            return p.isEmpty() ? "" : "The failure: " + p;
        } catch (StatusRuntimeException e) {
            return "A store operator's token shows the failure ("
                    + e.getStatus().getCode()
                    + " for this one).";
        }
    }

    /** The text index's analyzer and the embedder, or "-" for a collection of vectors only. */
    static String text(CollectionSpec s) {
        List<String> parts = new ArrayList<>();
        if (!s.getTextAnalyzer().isEmpty()) {
            parts.add("index: " + s.getTextAnalyzer());
        }
        if (!s.getEmbedder().isEmpty()) {
            parts.add("embedder: " + s.getEmbedder());
        }
        return parts.isEmpty() ? "-" : String.join(", ", parts);
    }
}
