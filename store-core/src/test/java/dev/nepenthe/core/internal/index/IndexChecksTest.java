package dev.nepenthe.core.internal.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.IndexConfig;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The shape every index file starts with: its bytes are part of the file format. */
class IndexChecksTest {

    private static byte[] shapeBytes(int dim, Metric metric) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        IndexChecks.writeShape(new DataOutputStream(bytes), dim, metric);
        return bytes.toByteArray();
    }

    @Test
    void metricCodesAreTheOnesFilesHold() throws IOException {
        // Files written before the codes were pinned hold the enum's order: COSINE 0, DOT 1, L2 2.
        assertArrayEquals(new byte[] {0, 0, 1, -128, 0}, shapeBytes(384, Metric.COSINE));
        assertArrayEquals(new byte[] {0, 0, 1, -128, 1}, shapeBytes(384, Metric.DOT));
        assertArrayEquals(new byte[] {0, 0, 1, -128, 2}, shapeBytes(384, Metric.L2));
    }

    @Test
    void shapeReadsBackForEveryMetric() throws IOException {
        for (Metric metric : Metric.values()) {
            byte[] bytes = shapeBytes(7, metric);
            IndexChecks.readShape(
                    new DataInputStream(new ByteArrayInputStream(bytes)),
                    new IndexConfig(7, metric));
        }
    }

    @Test
    void unknownMetricCodeIsRefusedByName() {
        byte[] bytes = {0, 0, 0, 7, 3};
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                IndexChecks.readShape(
                                        new DataInputStream(new ByteArrayInputStream(bytes)),
                                        new IndexConfig(7, Metric.L2)));
        assertEquals("metric code 3 is unknown", e.getMessage());
    }

    @Test
    void configRangeErrorsSayWhatWasExpectedAndWhatArrived() {
        IndexConfig config = new IndexConfig(8, Metric.L2, Map.of("n", "x", "d", "2.5"), 1);
        IllegalArgumentException notInt =
                assertThrows(
                        IllegalArgumentException.class, () -> config.intParam("k", "n", 1, 0, 9));
        assertEquals(
                "k index: parameter 'n' expected an integer in [0, 9], got 'x'",
                notInt.getMessage());
        IllegalArgumentException outside =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> config.doubleParam("k", "d", 1, 0, 1));
        assertEquals(
                "k index: parameter 'd' expected a number in [0.0, 1.0], got 2.5",
                outside.getMessage());
        IllegalArgumentException direct =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> IndexConfig.checkRange("k", "m", 10, 1, 8));
        assertEquals(
                "k index: parameter 'm' expected an integer in [1, 8], got 10",
                direct.getMessage());
        assertTrue(IndexChecks.alreadyLive(4).getMessage().contains("ordinal 4 is already live"));
    }
}
