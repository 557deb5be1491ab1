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
        String expected =
                forced == null || forced.isBlank()
                        ? "panama"
                        : forced.trim().toLowerCase(Locale.ROOT);
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
        IllegalStateException e =
                assertThrows(IllegalStateException.class, () -> Kernels.choose("panama", false));
        assertTrue(e.getMessage().contains("--add-modules jdk.incubator.vector"), e.getMessage());
        assertTrue(e.getMessage().contains(Kernels.PROPERTY), e.getMessage());
    }

    @Test
    void unknownValueNamesTheChoicesAndWhatArrived() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> Kernels.choose("avx512", true));
        String msg = e.getMessage();
        assertTrue(msg.contains(Kernels.PROPERTY), msg);
        assertTrue(msg.contains("'scalar', 'panama', 'panama-256' or 'panama-512'"), msg);
        assertTrue(msg.contains("'avx512'"), msg);
    }

    @Test
    void widthsAreOfferedOnlyWhereTheCpuRunsThem() {
        int[] widths = Kernels.panamaWidths();
        int widest = jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.vectorBitSize();
        // Every width offered is native here and named after itself; the same object each time.
        for (int w : widths) {
            assertTrue(w <= widest, "offered " + w + " bits on a " + widest + "-bit CPU");
            assertEquals("panama-" + w, Kernels.panama(w).name());
            assertSame(Kernels.panama(w), Kernels.panama(w));
            assertEquals("panama-" + w, Kernels.choose("panama-" + w, true).name());
        }
        assertEquals(widest >= 512 ? 2 : widest == 256 ? 1 : 0, widths.length);
        IllegalArgumentException odd =
                assertThrows(IllegalArgumentException.class, () -> Kernels.panama(384));
        assertTrue(
                odd.getMessage().contains("expected 256 or 512 bits, got 384"), odd.getMessage());
        if (widest < 512) {
            IllegalArgumentException wide =
                    assertThrows(IllegalArgumentException.class, () -> Kernels.panama(512));
            assertTrue(
                    wide.getMessage().contains("widest float vector is " + widest),
                    wide.getMessage());
        }
        assertThrows(IllegalStateException.class, () -> Kernels.choose("panama-256", false));
    }
}
