package dev.nepenthe.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.SearchHit;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs the README's demo with the real model and checks every claim it prints. */
class DemoTest {

    @Test
    void demoFindsTheHikerThenForgetsHerOnDiskAndInResults(@TempDir Path dir) throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        Demo.Outcome o = new Demo(dir, new MiniLmEmbedder(), "exact", new PrintStream(buf, true, StandardCharsets.UTF_8)).run();
        long alice = Demo.loadCorpus().stream().filter(m -> m.subject().equals("alice")).count();
        assertEquals(Demo.loadCorpus().size(), o.loaded());
        // The real model ranks Alice's Dolomites note first for the hiking question.
        assertEquals("alice", o.before().get(0).record().subject());
        assertTrue(o.before().get(0).record().text().contains("Dolomites"));
        assertEquals(alice, o.deleted());
        // Control and test of the byte scan: every note is found before, none after.
        assertEquals(alice, o.foundBefore());
        assertEquals(0, o.foundAfter());
        assertTrue(o.integrityClean());
        for (SearchHit h : o.after()) {
            assertTrue(!h.record().subject().equals("alice"), "a deleted subject came back in results");
        }
        String printed = buf.toString(StandardCharsets.UTF_8);
        assertTrue(printed.contains("deleted " + alice + " records"), printed);
        // Running again on the same folder starts fresh and gives the same outcome.
        Demo.Outcome again = new Demo(dir, new MiniLmEmbedder(), "exact", new PrintStream(new ByteArrayOutputStream())).run();
        assertEquals(o.loaded(), again.loaded());
        assertEquals(alice, again.deleted());
    }
}
