package dev.nepenthe.core.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Nepenthe;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A JVM started without the flags fails at open, naming every one it lacks. */
class JvmFlagsTest {

    /** Child-JVM entry point: opens a store. Args: folder. */
    public static final class Opener {
        public static void main(String[] args) throws Exception {
            try (Nepenthe _ = Nepenthe.open(Path.of(args[0]))) {
                System.out.println("OPENED");
            }
        }
    }

    @Test
    void thisJvmHasEveryRequiredFlag() {
        assertEquals(
                List.of(),
                JvmFlags.missing(net.openhft.chronicle.map.ChronicleMap.class.getModule()));
    }

    @Test
    void aJvmWithoutTheFlagsFailsAtOpenListingThem(@TempDir Path tmp) throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process p =
                new ProcessBuilder(
                                java,
                                "-cp",
                                System.getProperty("java.class.path"),
                                Opener.class.getName(),
                                tmp.resolve("store").toString())
                        .redirectErrorStream(true)
                        .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertNotEquals(0, p.exitValue(), out);
        assertTrue(out.contains("--add-opens=java.base/java.lang=ALL-UNNAMED"), out);
        assertTrue(out.contains("--add-exports=java.base/sun.nio.ch=ALL-UNNAMED"), out);
        assertTrue(out.contains("<nepenthe.jvm.flags>"), out);
        assertTrue(!out.contains("OPENED"), out);
    }
}
