package dev.nepenthe.server.bench.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.server.bench.soak.SoakTally.Kind;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The soak at smoke size (20 seconds, a server JVM on loopback restarted twice: once cleanly, once
 * with SIGKILL): every kind of operation ran, the checks against the model ran after each restart
 * and at the end and found nothing. The control runs the same with deliberate faults (a restart
 * onto a snapshot older than acknowledged writes, and a forgotten subject written back behind the
 * model's back): the same checks must find lost writes and forgotten records served, so a clean
 * result means something. Each run is bounded by its seconds plus the server's starts (at most
 * three) and the checks.
 */
class SoakBenchTest {

    private static final String SMOKE =
            "seconds=20 restart-every=7 forget-every=1.5 snapshot-every=4 writes=12"
                    + " searches=12 deletes=3 dim=16 server-heap=256m";

    @Test
    void theSmokeRunChecksAfterEachRestartAndFindsNothing(@TempDir Path tmp) throws Exception {
        SoakBench.Outcome out =
                SoakBench.run(SoakOptions.parse((SMOKE + " dir=" + tmp).split(" ")));
        String report = SoakReport.markdown(out);
        System.out.println(report);
        assertTrue(out.passed(), report);
        assertEquals(0, out.lost(), report);
        assertEquals(0, out.resurrected(), report);
        assertEquals(0, out.forgottenServed(), report);
        assertEquals(0, out.errors(), report);
        // The checks ran: after both restarts and at the end, over records and forgotten records.
        assertEquals(3, out.checks().size(), report);
        assertEquals("end", out.checks().getLast().when());
        assertTrue(out.checks().getLast().recordsChecked() > 20, report);
        assertTrue(out.checks().getLast().forgottenChecked() > 0, report);
        assertEquals(1, out.cleanStops(), report);
        assertEquals(1, out.kills(), report);
        assertEquals(3, out.incarnations().size(), report);
        for (Kind k :
                new Kind[] {
                    Kind.UPSERT,
                    Kind.SEARCH,
                    Kind.DELETE,
                    Kind.FORGET,
                    Kind.SEALED,
                    Kind.SNAPSHOT,
                    Kind.RESTART
                }) {
            assertTrue(out.tally().counts(k)[0] > 0, k + " never ran: " + report);
        }
        assertTrue(
                out.incarnations().getFirst().atStart().heapBytes() > 0,
                "the heap was read: " + report);
        assertTrue(
                out.incarnations().getFirst().atStart().rssBytes() > 0,
                "the RSS was read: " + report);
        assertTrue(report.contains("Verdict: **passed**"), report);
    }

    @Test
    void theChecksFailWhenTheServerLosesWritesAndServesForgottenRecords(@TempDir Path tmp)
            throws Exception {
        SoakBench.Outcome out =
                SoakBench.run(SoakOptions.parse((SMOKE + " fault=both dir=" + tmp).split(" ")));
        String report = SoakReport.markdown(out);
        System.out.println(report);
        assertFalse(out.passed(), report);
        assertTrue(
                out.lost() > 0,
                "the restart onto an older snapshot loses acknowledged writes: " + report);
        assertTrue(
                out.forgottenServed() > 0,
                "the forgotten records written back are served: " + report);
        assertTrue(report.contains("Verdict: **failed**"), report);
    }

    @Test
    void badArgumentsSayWhatWasExpected() {
        assertTrue(
                assertThrows(
                                IllegalArgumentException.class,
                                () -> SoakOptions.parse(new String[] {"minutes=1", "seconds=5"}))
                        .getMessage()
                        .contains("expected one of them, got both"));
        assertTrue(
                assertThrows(
                                IllegalArgumentException.class,
                                () -> SoakOptions.parse(new String[] {"fault=disk"}))
                        .getMessage()
                        .contains("got 'disk'"));
        assertTrue(
                assertThrows(
                                IllegalArgumentException.class,
                                () -> SoakOptions.parse(new String[] {"minute=3"}))
                        .getMessage()
                        .contains("got 'minute=3'"));
        assertTrue(
                assertThrows(
                                IllegalArgumentException.class,
                                () -> SoakOptions.parse(new String[] {"seconds=-1"}))
                        .getMessage()
                        .contains("above 0"));
        SoakOptions o = SoakOptions.parse(new String[] {"minutes=0.5", "--out", "r.md"});
        assertEquals(30, o.seconds());
        assertEquals(Path.of("r.md"), o.out());
    }
}
