package dev.nepenthe.server.cli;

import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.Readmission;
import dev.nepenthe.grpc.v1.ReadmitRequest;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe readmit}: lifts the fences sealed forgets left on a subject or on record ids of
 * the token's tenant, so that writes the forgets refused are accepted again, as new records. Prints
 * the re-admission, the forget operations it lifted and its ledger entry.
 */
@Command(
        name = "readmit",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Re-admit a forgotten subject, or forgotten record ids, on a server, in the token's"
                + " tenant: writes their forgets refused are accepted again and stored as new"
                + " records; nothing from before the forgets comes back, and their receipts still"
                + " verify. Recorded in the evidence ledger.",
            "Refused while a forget of the scope is unsealed, and when no sealed forget fences it"
                    + " (or it was re-admitted already). Exit 0 when done, 3 on errors."
        })
public final class ReadmitCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Mixin ServerConnection connection;

    @ArgGroup(exclusive = true, multiplicity = "1", heading = "What to re-admit (one of):%n")
    Scope scope;

    static final class Scope {
        @Option(
                names = "--subject",
                paramLabel = "S",
                description = "A subject its sealed forgets fenced.")
        String subject;

        @Option(
                names = "--records",
                split = ",",
                paramLabel = "ID",
                description =
                        "Record ids sealed forgets fenced (comma-separated); a forgotten subject's"
                                + " fence stays.")
        List<String> records;
    }

    @Option(
            names = "--reason",
            required = true,
            paramLabel = "CODE",
            description = "Why, as a code (consent-renewed).")
    String reason;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        ForgetScope s =
                scope.subject != null
                        ? ForgetScope.newBuilder().setSubject(scope.subject).build()
                        : ForgetScope.newBuilder()
                                .setRecords(
                                        ForgetScope.RecordIds.newBuilder().addAllIds(scope.records))
                                .build();
        try (ServerConnection.Client client = connection.connect()) {
            Readmission r =
                    client.forget()
                            .readmit(
                                    ReadmitRequest.newBuilder()
                                            .setScope(s)
                                            .setReasonCode(reason)
                                            .build());
            out.println(
                    "readmission "
                            + r.getId()
                            + ": "
                            + r.getScopeKind()
                            + " (scope hash "
                            + r.getScopeHash()
                            + ") for "
                            + r.getReasonCode());
            out.println(
                    "fences lifted of forget operations: "
                            + String.join(", ", r.getForgetOperationsList()));
            out.println("ledger entry " + r.getLedgerSeq() + ":" + r.getLedgerHash());
            return 0;
        }
    }
}
