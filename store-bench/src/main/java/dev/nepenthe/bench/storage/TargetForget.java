package dev.nepenthe.bench.storage;

import static dev.nepenthe.bench.storage.OpenBench.SUBJECT;
import static dev.nepenthe.bench.storage.OpenBench.seconds;

import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One of the open benchmark's forgets: a target subject forgotten to SEALED, timed, with its
 * cleanup and verification read from the operation's timeline, and checked to have taken exactly
 * the subject's records.
 */
final class TargetForget {

    private TargetForget() {}

    /**
     * One forget: seconds to SEALED, and of them the cleanup's and the verification's with the
     * seal.
     */
    record Forget(double sealedS, double cleanupS, double verifyS) {
        @Override
        public String toString() {
            // What comes before the cleanup: the request, the mark and the resolve of the scope.
            return String.format(
                    Locale.ROOT,
                    "%.2f s (before the cleanup %.2f, cleanup %.2f, verify and seal %.2f)",
                    sealedS,
                    sealedS - cleanupS - verifyS,
                    cleanupS,
                    verifyS);
        }
    }

    /**
     * Forgets subject {@code "target" + t} and returns what it took; a wrong outcome goes to {@code
     * wrong}.
     */
    static Forget forget(Nepenthe store, int n, int t, List<String> wrong)
            throws InterruptedException {
        long t0 = System.nanoTime();
        ForgetOperation op =
                store.awaitOperation(
                        store.forget(
                                        ForgetRequest.of(
                                                ForgetScope.subject("target" + t),
                                                "bench-forget-" + t,
                                                "benchmark"))
                                .id(),
                        Duration.ofMinutes(10));
        double s = seconds(t0);
        if (op.state() != OperationState.SEALED || op.totalForgotten() != SUBJECT) {
            wrong.add(
                    "n="
                            + n
                            + ": forget "
                            + t
                            + " ended "
                            + op.state()
                            + " with "
                            + op.totalForgotten()
                            + " records,"
                            + " expected SEALED with "
                            + SUBJECT
                            + ": "
                            + op.note());
        }
        Map<OperationState, Instant> tl = op.timeline();
        return new Forget(
                s,
                between(tl, OperationState.CLEANUP, OperationState.VERIFYING),
                between(tl, OperationState.VERIFYING, op.state()));
    }

    /**
     * Seconds from the operation's entry into {@code from} to its entry into {@code to}, NaN if it
     * skipped one.
     */
    private static double between(
            Map<OperationState, Instant> timeline, OperationState from, OperationState to) {
        Instant a = timeline.get(from);
        Instant b = timeline.get(to);
        return a == null || b == null ? Double.NaN : Duration.between(a, b).toNanos() / 1e9;
    }
}
