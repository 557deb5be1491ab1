package dev.nepenthe.cluster.cli;

import dev.nepenthe.cluster.Member;
import dev.nepenthe.grpc.v1.AddReplicaRequest;
import dev.nepenthe.grpc.v1.ClusterStatus;
import dev.nepenthe.grpc.v1.RemoveReplicaRequest;
import dev.nepenthe.grpc.v1.ReplicaStatus;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe cluster add-replica} and {@code remove-replica}: an operator changes the group's
 * members through any running member's API (plaintext, so a member on loopback, as {@code up}
 * starts them). Both print the members as they then stand.
 */
abstract class MembershipCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Option(
            names = "--server",
            required = true,
            paramLabel = "HOST:PORT",
            description = "The client address of a running member.")
    String server;

    @Option(
            names = "--token-file",
            required = true,
            paramLabel = "FILE",
            description = "The operator token ('cluster up' prints where it is).")
    Path tokenFile;

    @Option(
            names = "--id",
            required = true,
            paramLabel = "ID",
            description = "The replica added or removed.")
    String id;

    @Option(
            names = "--wait-seconds",
            defaultValue = "600",
            description = "How long to wait for the group (default: ${DEFAULT-VALUE}).")
    long waitSeconds;

    /** Asks the member; returns the members as they then stand. */
    abstract ClusterStatus change(NodeClient client);

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        if (!Files.isRegularFile(tokenFile)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--token-file: expected the operator token file, got '"
                            + tokenFile
                            + "', which does not exist");
        }
        Member via;
        try {
            Member.port(server, "--server");
            via = new Member("via", server, server);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        String token = Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
        try (NodeClient client = new NodeClient(via, token)) {
            ClusterStatus s = change(client);
            out.printf("group %s, leader %s, term %d:%n", s.getGroup(), s.getLeader(), s.getTerm());
            for (ReplicaStatus r : s.getReplicasList()) {
                out.printf(
                        "  %-8s %-9s %s commit %d lag %d%n",
                        r.getId(), r.getRole(), r.getRaftAddress(), r.getCommitIndex(), r.getLag());
            }
            out.flush();
            return 0;
        } catch (StatusRuntimeException e) {
            spec.commandLine()
                    .getErr()
                    .println(
                            "nepenthe cluster "
                                    + spec.name()
                                    + ": "
                                    + e.getStatus().getCode()
                                    + ": "
                                    + e.getStatus().getDescription());
            return ClusterMain.FAILED;
        }
    }

    /** {@code add-replica}. */
    @Command(
            name = "add-replica",
            mixinStandardHelpOptions = true,
            description = {
                "Add a replica to the group. Start it first with 'cluster node --join"
                        + " --master-key' (the group's key); it catches up by a copy of the"
                        + " leader's store, and this returns once the group counts it.",
                "An id that was ever a member is refused: a wiped replica rejoins under a new id."
            })
    static final class Add extends MembershipCommand {

        @Option(
                names = "--raft-address",
                required = true,
                paramLabel = "HOST:PORT",
                description = "Where the other replicas reach the new one's Raft server.")
        String raftAddress;

        @Override
        ClusterStatus change(NodeClient client) {
            return client.admin(waitSeconds)
                    .addReplica(
                            AddReplicaRequest.newBuilder()
                                    .setReplica(id)
                                    .setRaftAddress(raftAddress)
                                    .build());
        }
    }

    /** {@code remove-replica}. */
    @Command(
            name = "remove-replica",
            mixinStandardHelpOptions = true,
            description = {
                "Remove a replica from the group, with a reason code. It is excused from every"
                        + " open forget it has not attested (their receipts name it), stops, and"
                        + " will not start again on its folder: wipe it, and add it under a new"
                        + " id."
            })
    static final class Remove extends MembershipCommand {

        @Option(
                names = "--reason",
                required = true,
                paramLabel = "CODE",
                description = "Why, as a code (lower-case letters, digits, '-', '_', '.').")
        String reason;

        @Override
        ClusterStatus change(NodeClient client) {
            return client.admin(waitSeconds)
                    .removeReplica(
                            RemoveReplicaRequest.newBuilder()
                                    .setReplica(id)
                                    .setReasonCode(reason)
                                    .build());
        }
    }
}
