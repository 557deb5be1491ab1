package dev.nepenthe.bench.suite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The suite's rewriting of its own sections of the benchmarks document, and nothing else. */
class ReportDocTest {

    private static final List<String> ORDER = List.of("a", "b", "c");
    private static final String DOC =
            "# Benchmarks\n\nintro\n\n"
                    + ReportDoc.BEGIN
                    + "\n"
                    + ReportDoc.END
                    + "\n\n## Older\n\nkept <!-- suite:a:begin --> as it is\n";

    @Test
    void aNewSectionGoesIntoTheRegionAndARerunReplacesIt() {
        String once = ReportDoc.replace(DOC, "doc.md", "b", "first", ORDER);
        assertEquals(
                "# Benchmarks\n\nintro\n\n"
                        + ReportDoc.BEGIN
                        + "\n<!-- suite:b:begin -->\nfirst\n<!-- suite:b:end -->\n\n"
                        + ReportDoc.END
                        + "\n\n## Older\n\nkept <!-- suite:a:begin --> as it is\n",
                once);
        String twice = ReportDoc.replace(once, "doc.md", "b", "second\n", ORDER);
        assertEquals(once.replace("first", "second"), twice);
    }

    @Test
    void aNewSectionTakesItsPlaceInTheSuitesOrder() {
        String text = ReportDoc.replace(DOC, "doc.md", "c", "C", ORDER);
        text = ReportDoc.replace(text, "doc.md", "a", "A", ORDER);
        text = ReportDoc.replace(text, "doc.md", "b", "B", ORDER);
        int a = text.indexOf("\nA\n");
        int b = text.indexOf("\nB\n");
        int c = text.indexOf("\nC\n");
        assertTrue(a > 0 && a < b && b < c && c < text.indexOf(ReportDoc.END), text);
        // The marker-like text after the region is the document's own, never taken for a section.
        assertTrue(text.endsWith("kept <!-- suite:a:begin --> as it is\n"), text);
    }

    @Test
    void missingOrBrokenMarkersFailNamingTheFile() {
        IllegalArgumentException none =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> ReportDoc.replace("# no region\n", "docs/X.md", "a", "A", ORDER));
        assertTrue(
                none.getMessage().startsWith("docs/X.md: expected the suite's region"),
                none.getMessage());
        String unpaired =
                DOC.replace(ReportDoc.END, "<!-- suite:a:begin -->\nhalf\n" + ReportDoc.END);
        IllegalArgumentException half =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> ReportDoc.replace(unpaired, "docs/X.md", "a", "A", ORDER));
        assertTrue(half.getMessage().contains("has no <!-- suite:a:end -->"), half.getMessage());
    }
}
