package dev.nepenthe.server.cli;

import dev.nepenthe.grpc.v1.ErasureLevel;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.server.Main;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe forget}: the forget protocol from a terminal. Sends the forget (it returns once
 * the scope is marked, BLOCKED), then follows the operation with the server's Watch and prints each
 * state as it is entered, until it settles; then the outcome, the surfaces and the receipt.
 */
@Command(
        name = "forget",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Forget a subject, records or a source on a server, in the token's tenant, and follow"
                + " the operation until it settles: each state with the milliseconds since it was"
                + " received, then the outcome, what each surface purged and checked, and the"
                + " signed receipt.",
            "Exit 0 when SEALED, 1 when it stops in NEEDS_REVIEW or is held"
                    + " (COMPLETED_WITH_EXCEPTION), 3 on errors.",
            "The same idempotency key returns the same operation: rerun with --key to retry, or to"
                    + " fetch a receipt again."
        })
public final class ForgetCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Mixin ServerConnection connection;

    @ArgGroup(exclusive = true, multiplicity = "1", heading = "What to forget (one of):%n")
    Scope scope;

    static final class Scope {
        @Option(
                names = "--subject",
                paramLabel = "S",
                description = "Every record about this subject.")
        String subject;

        @Option(
                names = "--records",
                split = ",",
                paramLabel = "ID",
                description = "These record ids (comma-separated).")
        List<String> records;

        @Option(
                names = "--source",
                paramLabel = "KIND:ID[:VERSION]",
                description = "Every record from this source, or from one version of it.")
        String source;
    }

    @Option(
            names = "--reason",
            required = true,
            paramLabel = "CODE",
            description = "Why, as a code (gdpr-art17).")
    String reason;

    @Option(
            names = "--key",
            paramLabel = "IDEMPOTENCY",
            description = "Idempotency key (default: a random one, printed).")
    String key;

    @Option(
            names = "--threshold",
            paramLabel = "X",
            description =
                    "Cosine at or above which a survivor is a suspect; may only tighten the"
                            + " server's.")
    Double threshold;

    @Option(
            names = "--rebuild",
            description =
                    "Rebuild the affected indexes from the survivors instead of repairing in"
                            + " place.")
    boolean rebuild;

    @Option(
            names = "--exact-probe",
            description =
                    "Compare every forgotten vector with every survivor, also where the server's"
                            + " probe policy would search a large tenant through the index.")
    boolean exactProbe;

    @Option(
            names = "--identifier",
            paramLabel = "NAME",
            description =
                    "A name, email or number of the subject to look for in what survives;"
                            + " repeatable.")
    List<String> identifiers = new ArrayList<>();

    @Option(
            names = "--receipt-out",
            paramLabel = "FILE",
            description = "Write the receipt here instead of printing it.")
    Path receiptOut;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        ForgetRequest.Builder r =
                ForgetRequest.newBuilder()
                        .setScope(scope())
                        .setReasonCode(reason)
                        .setLevel(rebuild ? ErasureLevel.REBUILD : ErasureLevel.REPAIR)
                        .addAllIdentifiers(identifiers)
                        .setExactProbe(exactProbe);
        if (threshold != null) {
            r.setProbeThreshold(threshold);
        }
        String k = key != null ? key : UUID.randomUUID().toString();
        r.setIdempotencyKey(k);
        if (key == null) {
            out.println(
                    "idempotency key " + k + " (pass --key " + k + " to retry this same forget)");
        }
        try (ServerConnection.Client client = connection.connect()) {
            Operation op = client.forget().forget(r.build());
            out.println(OperationReport.heading(op));
            OperationReport report = new OperationReport(out);
            report.states(op);
            if (!op.getSettled()) {
                Iterator<Operation> watch =
                        client.forgetWatch()
                                .watch(GetOperationRequest.newBuilder().setId(op.getId()).build());
                while (watch.hasNext()) {
                    op = watch.next();
                    report.states(op);
                }
            }
            if (!op.getSettled()) {
                throw new IllegalStateException(
                        "the watch ended at "
                                + op.getState()
                                + " before operation "
                                + op.getId()
                                + " settled; follow it with 'nepenthe status --operation "
                                + op.getId()
                                + "'");
            }
            out.println();
            report.details(op);
            if (!op.getReceipt().isEmpty()) {
                if (receiptOut != null) {
                    Files.writeString(receiptOut, op.getReceipt(), StandardCharsets.UTF_8);
                    out.println("receipt written to " + receiptOut);
                } else {
                    out.println();
                    out.println("receipt:");
                    out.println(op.getReceipt());
                }
            }
            return op.getState().equals("SEALED") ? 0 : Main.DOES_NOT_HOLD;
        }
    }

    private ForgetScope scope() {
        if (scope.subject != null) {
            return ForgetScope.newBuilder().setSubject(scope.subject).build();
        }
        if (scope.records != null) {
            return ForgetScope.newBuilder()
                    .setRecords(ForgetScope.RecordIds.newBuilder().addAllIds(scope.records))
                    .build();
        }
        String[] p = scope.source.split(":", -1);
        if (p.length < 2 || p.length > 3 || p[0].isEmpty() || p[1].isEmpty()) {
            throw misuse(
                    "--source: expected KIND:ID or KIND:ID:VERSION, got '" + scope.source + "'");
        }
        ForgetScope.Source.Builder s = ForgetScope.Source.newBuilder().setKind(p[0]).setId(p[1]);
        if (p.length == 3) {
            try {
                s.setVersion(Long.parseLong(p[2]));
            } catch (NumberFormatException e) {
                throw misuse(
                        "--source: expected an integer version after the second ':', got '"
                                + p[2]
                                + "'");
            }
        }
        return ForgetScope.newBuilder().setSource(s).build();
    }

    private CommandLine.ParameterException misuse(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }
}
