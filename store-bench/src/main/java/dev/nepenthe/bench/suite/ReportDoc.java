package dev.nepenthe.bench.suite;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * The part of docs/BENCHMARKS.md the suite writes: one region between {@code <!-- suite:begin -->}
 * and {@code <!-- suite:end -->}, and in it a section per step between {@code <!-- suite:NAME:begin
 * -->} and {@code <!-- suite:NAME:end -->}. A run replaces the sections of the steps it ran and
 * leaves every other line of the file as it was; a step met for the first time gets its section at
 * the region's end, or before the section of the first step after it in the suite's order.
 */
final class ReportDoc {
    static final String BEGIN = "<!-- suite:begin -->";
    static final String END = "<!-- suite:end -->";

    private ReportDoc() {}

    static String begin(String step) {
        return "<!-- suite:" + step + ":begin -->";
    }

    static String end(String step) {
        return "<!-- suite:" + step + ":end -->";
    }

    /**
     * {@code text} with the section of {@code step} replaced by {@code body} (the markers added
     * around it).
     *
     * @param order every step's name in the suite's order, to place a new section
     * @throws IllegalArgumentException naming {@code where} when the region's markers are missing
     *     or out of order, or a step's markers are unpaired
     */
    static String replace(String text, String where, String step, String body, List<String> order) {
        int regionStart = text.indexOf(BEGIN);
        int regionEnd = text.indexOf(END);
        if (regionStart < 0 || regionEnd < regionStart) {
            throw new IllegalArgumentException(
                    where
                            + ": expected the suite's region, a line "
                            + BEGIN
                            + " and later a line "
                            + END
                            + "; "
                            + (regionStart < 0
                                    ? "found no " + BEGIN
                                    : "found " + END + " before " + BEGIN));
        }
        String section = begin(step) + "\n" + body.strip() + "\n" + end(step);
        int s = text.indexOf(begin(step), regionStart);
        int e = text.indexOf(end(step), regionStart);
        if (s >= 0 && s < regionEnd) {
            if (e < s || e > regionEnd) {
                throw new IllegalArgumentException(
                        where
                                + ": "
                                + begin(step)
                                + " has no "
                                + end(step)
                                + " after it inside the suite's region");
            }
            return text.substring(0, s) + section + text.substring(e + end(step).length());
        }
        if (e >= 0 && e < regionEnd) {
            throw new IllegalArgumentException(
                    where + ": " + end(step) + " has no " + begin(step) + " before it");
        }
        int at = regionEnd;
        for (int i = order.indexOf(step) + 1; i > 0 && i < order.size(); i++) {
            int next = text.indexOf(begin(order.get(i)), regionStart);
            if (next >= 0 && next < regionEnd) {
                at = next;
                break;
            }
        }
        return text.substring(0, at) + section + "\n\n" + text.substring(at);
    }

    /** {@link #replace} on a file, written whole to a sibling and moved over it. */
    static void replace(Path doc, String step, String body, List<String> order) throws IOException {
        String text = Files.readString(doc, StandardCharsets.UTF_8);
        String out = replace(text, doc.toString(), step, body, order);
        Path tmp = doc.resolveSibling(doc.getFileName() + ".suite-tmp");
        Files.writeString(tmp, out, StandardCharsets.UTF_8);
        Files.move(tmp, doc, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
