package dev.nepenthe.server.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The server's load run at the benchmark suite's smoke size (what {@code ./nepenthe bench all
 * profile=smoke only=server-load} runs): it loads, serves, forgets and prints its table, with every
 * phase answering requests, so the run cannot rot.
 */
class ServerLoadBenchTest {

    @Test
    void theSmokeRunAnswersInEveryPhase() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream saved = System.out;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            ServerLoadBench.main(new String[] {"n=300", "dim=16", "clients=1", "seconds=1"});
        } finally {
            System.setOut(saved);
        }
        String text = out.toString(StandardCharsets.UTF_8);
        saved.println(text);
        for (String phase : new String[] {"embedded", "server", "server, forgets running"}) {
            Matcher m = Pattern.compile("\\| " + phase + " \\| 1 \\| ([0-9]+) \\|").matcher(text);
            assertTrue(
                    m.find() && Long.parseLong(m.group(1)) > 0,
                    phase + " answered nothing: " + text);
        }
    }
}
