package net.openhft.chronicle.values;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import net.openhft.chronicle.hash.VanillaGlobalMutableState;
import org.junit.jupiter.api.Test;

/**
 * store-core carries the class chronicle-values would otherwise generate and compile with javac the
 * first time a JVM builds a Chronicle Map (see the comment atop its source). In this package
 * because the generator is package-private here.
 */
class ChronicleValuesPrecompiledTest {

    private static final Path SOURCE =
            Path.of(
                    "src/main/carried/net/openhft/chronicle/hash/VanillaGlobalMutableState$$Native.java");

    /**
     * Fails when a new chronicle-map or chronicle-values generates something else: the class
     * carried here would then not be the one the library expects. Regenerate it from the text this
     * test leaves in target/.
     */
    @Test
    void theCarriedSourceIsWhatTheLibraryGeneratesToday() throws Exception {
        String generated =
                Generators.generateNativeClass(
                        ValueModel.acquire(VanillaGlobalMutableState.class),
                        "VanillaGlobalMutableState$$Native");
        String carried = Files.readString(SOURCE, StandardCharsets.UTF_8);
        String body =
                carried.substring(carried.indexOf("\npackage ") + 1); // what follows the comment
        if (!body.equals(generated)) {
            Path now = Path.of("target", "VanillaGlobalMutableState$$Native.generated.java");
            Files.writeString(now, generated, StandardCharsets.UTF_8);
            fail(
                    SOURCE
                            + " differs from what chronicle-values generates with the versions on"
                            + " the class path; the generated text is in "
                            + now
                            + ": put it below the comment and the package line");
        }
    }

    /**
     * The library finds the carried class rather than compiling its own: a class javac made at run
     * time is defined with no code source, the carried one comes from store-core's classes.
     */
    @Test
    void chronicleValuesLoadsTheCarriedClass() {
        Class<?> used = Values.nativeClassFor(VanillaGlobalMutableState.class);
        assertEquals(
                "net.openhft.chronicle.hash.VanillaGlobalMutableState$$Native", used.getName());
        assertNotNull(
                used.getProtectionDomain().getCodeSource(), "compiled at run time, not loaded");
        assertEquals(
                dev.nepenthe.core.Nepenthe.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation(),
                used.getProtectionDomain().getCodeSource().getLocation(),
                "loaded from somewhere else than store-core");
    }
}
