package dev.nepenthe.core.vector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Locale;
import org.junit.jupiter.api.Test;

/** The once-per-process choice of kernels, tested through the package-private choice logic. */
class KernelsTest {

    @Test
    void processChoiceHonoursTheProperty() {
        String forced = System.getProperty(Kernels.PROPERTY);
        // Surefire runs the suite once with "panama" and once with "scalar"; an IDE run without
        // the property must get the Vector API because the test JVM has the module.
        String expected = forced == null || forced.isBlank() ? "panama" : forced.trim().toLowerCase(Locale.ROOT);
        assertEquals(expected, Kernels.get().name());
    }

    @Test
    void namedAccessorsReturnTheirImplementations() {
        assertEquals("scalar", Kernels.scalar().name());
        assertEquals("panama", Kernels.panama().name());
        assertSame(Kernels.panama(), Kernels.panama());
    }

    @Test
    void forcedValuesAreHonouredWhateverTheModuleSays() {
        assertEquals("scalar", Kernels.choose("scalar", true).name());
        assertEquals("scalar", Kernels.choose("scalar", false).name());
        assertEquals("panama", Kernels.choose("panama", true).name());
        assertEquals("panama", Kernels.choose("  Panama ", true).name());
    }

    @Test
    void unsetPicksPanamaOnlyWhenTheModuleIsThere() {
        assertEquals("panama", Kernels.choose(null, true).name());
        assertEquals("panama", Kernels.choose("", true).name());
        assertEquals("scalar", Kernels.choose(null, false).name());
        assertEquals("scalar", Kernels.choose(" ", false).name());
    }

    @Test
    void forcingPanamaWithoutTheModuleFailsLoudly() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Kernels.choose("panama", false));
        assertTrue(e.getMessage().contains("--add-modules jdk.incubator.vector"), e.getMessage());
        assertTrue(e.getMessage().contains(Kernels.PROPERTY), e.getMessage());
    }

    @Test
    void unknownValueNamesTheChoicesAndWhatArrived() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Kernels.choose("avx512", true));
        String msg = e.getMessage();
        assertTrue(msg.contains(Kernels.PROPERTY), msg);
        assertTrue(msg.contains("'scalar' or 'panama'"), msg);
        assertTrue(msg.contains("'avx512'"), msg);
    }
}
