package dev.nepenthe.server.cli;

import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.SurfaceOutcome;
import dev.nepenthe.grpc.v1.Suspect;
import java.io.PrintWriter;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * How a forget operation reads on a terminal, shared by {@code forget} and {@code status
 * --operation}: its states with the time each was entered (milliseconds after the operation was
 * received, by the server's clock), then the outcome, what each surface purged and checked, the
 * suspects and holds.
 */
final class OperationReport {

    private final PrintWriter out;
    private final Set<String> printed = new HashSet<>();

    OperationReport(PrintWriter out) {
        this.out = out;
    }

    /**
     * The line that names an operation: "operation ID: forget KIND for REASON".
     *
     * @param op the operation
     * @return the line, without a line break
     */
    static String heading(Operation op) {
        return "operation "
                + op.getId()
                + ": forget "
                + op.getScopeKind()
                + " for "
                + op.getReasonCode();
    }

    /**
     * Prints the states of {@code op}'s timeline not printed yet, in the order they were entered. A
     * watch may miss a short state, but every message's timeline lists them all, so none is lost.
     */
    void states(Operation op) {
        Map<String, Long> t = op.getTimelineMicrosMap();
        long start = t.values().stream().min(Long::compare).orElse(0L);
        t.entrySet().stream()
                .sorted(
                        Map.Entry.<String, Long>comparingByValue()
                                .thenComparing(Map.Entry.comparingByKey()))
                .filter(e -> printed.add(e.getKey()))
                .forEach(
                        e ->
                                out.printf(
                                        Locale.ROOT,
                                        "  %-24s %+,12.1f ms%n",
                                        e.getKey(),
                                        (e.getValue() - start) / 1000.0));
        if (!t.containsKey(op.getState()) && printed.add(op.getState())) {
            out.printf(Locale.ROOT, "  %s%n", op.getState());
        }
        out.flush();
    }

    /** The outcome, surfaces table, suspects, holds and note. */
    void details(Operation op) {
        out.printf(
                "%s%s%n", op.getState(), op.getOutcome().isEmpty() ? "" : ": " + op.getOutcome());
        if (op.getForgottenCount() > 0) {
            StringBuilder s = new StringBuilder("records forgotten:");
            new TreeMap<>(op.getForgottenMap())
                    .forEach((c, n) -> s.append(' ').append(c).append(' ').append(n));
            out.println(s);
        }
        if (!op.getNote().isEmpty()) {
            out.println("note: " + op.getNote());
        }
        List<SurfaceOutcome> surfaces = op.getSurfacesList();
        if (!surfaces.isEmpty()) {
            int w =
                    Math.max(
                            "surface".length(),
                            surfaces.stream()
                                    .mapToInt(o -> o.getSurface().length())
                                    .max()
                                    .orElse(0));
            int c =
                    Math.max(
                            "class".length(),
                            surfaces.stream()
                                    .mapToInt(o -> o.getErasureClass().length())
                                    .max()
                                    .orElse(0));
            String row = "%-" + w + "s  %-" + c + "s  %8s  %8s  %-5s  %s%n";
            out.println();
            out.printf(
                    Locale.ROOT,
                    row,
                    "surface",
                    "class",
                    "purged",
                    "checked",
                    "clean",
                    "residual / problems");
            for (SurfaceOutcome o : surfaces) {
                String notes = String.join("; ", o.getProblemsList());
                if (!o.getResidual().isEmpty()) {
                    notes = o.getResidual() + (notes.isEmpty() ? "" : "; " + notes);
                }
                out.printf(
                        Locale.ROOT,
                        row,
                        o.getSurface(),
                        o.getErasureClass(),
                        o.getPurged(),
                        o.getChecked(),
                        o.getClean() ? "yes" : "NO",
                        notes.isEmpty() ? "-" : notes);
            }
        }
        if (op.getSuspectsCount() > 0) {
            out.println();
            out.println("suspects (survivors that look like what was forgotten):");
            op.getSuspectsList().stream()
                    .sorted(Comparator.comparingDouble(Suspect::getScore).reversed())
                    .forEach(
                            s ->
                                    out.printf(
                                            Locale.ROOT,
                                            "  %s/%s  score %.4f  %s%s%n",
                                            s.getCollection(),
                                            s.getRecordId(),
                                            s.getScore(),
                                            s.getReason(),
                                            s.getDetail().isEmpty()
                                                    ? ""
                                                    : " (" + s.getDetail() + ")"));
        }
        if (op.getHoldsCount() > 0) {
            out.println(
                    "held by legal hold"
                            + (op.getHoldsCount() > 1 ? "s " : " ")
                            + String.join(", ", op.getHoldsList()));
        }
        out.flush();
    }
}
