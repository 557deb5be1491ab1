package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.nepenthe.hnsw.HnswParams.Quantization;
import dev.nepenthe.hnsw.HnswParams.VectorStorage;
import org.junit.jupiter.api.Test;

/**
 * The withers and the parameter values against the canonical constructor: each wither changes its
 * one component and keeps the others, still checked; each enum's parameter values round-trip and a
 * value it does not know is refused naming the parameter, the accepted values and the one given.
 */
class HnswParamsTest {

    private static final HnswParams BASE =
            new HnswParams(12, 80, 50, 0.4, 30, 7L, Quantization.INT8, 20, VectorStorage.OFF_HEAP);

    @Test
    void eachWitherChangesItsComponentOnly() {
        assertEquals(
                new HnswParams(
                        12, 80, 99, 0.4, 30, 7L, Quantization.INT8, 20, VectorStorage.OFF_HEAP),
                BASE.withEfSearch(99));
        assertEquals(
                new HnswParams(
                        12, 80, 50, 0.4, 99, 7L, Quantization.INT8, 20, VectorStorage.OFF_HEAP),
                BASE.withRepairEf(99));
        assertEquals(
                new HnswParams(
                        12, 80, 50, 0.4, 30, 99L, Quantization.INT8, 20, VectorStorage.OFF_HEAP),
                BASE.withSeed(99L));
        assertEquals(
                new HnswParams(
                        12, 80, 50, 0.4, 30, 7L, Quantization.NONE, 20, VectorStorage.OFF_HEAP),
                BASE.withQuantization(Quantization.NONE));
        assertEquals(
                new HnswParams(12, 80, 50, 0.4, 30, 7L, Quantization.INT8, 20, VectorStorage.HEAP),
                BASE.withStorage(VectorStorage.HEAP));
        assertEquals(
                new HnswParams(
                        12, 80, 50, 0.4, 30, 7L, Quantization.INT8, 99, VectorStorage.OFF_HEAP),
                BASE.withRerank(99));
    }

    @Test
    void aWitherStillChecksTheCopy() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> BASE.withEfSearch(0));
        assertEquals(
                "hnsw index: efConstruction, efSearch and repairEf expected >= 1, got 80, 0, 30",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> BASE.withStorage(null));
        assertEquals("hnsw index: vectors expected heap or offheap, got null", e.getMessage());
    }

    @Test
    void parameterValuesRoundTripAndUnknownOnesAreNamed() {
        assertEquals("heap", VectorStorage.HEAP.paramValue());
        assertEquals("offheap", VectorStorage.OFF_HEAP.paramValue());
        assertEquals("none", Quantization.NONE.paramValue());
        assertEquals("int8", Quantization.INT8.paramValue());
        for (VectorStorage v : VectorStorage.values()) {
            assertEquals(v, VectorStorage.fromParam(v.paramValue()));
        }
        for (Quantization q : Quantization.values()) {
            assertEquals(q, Quantization.fromParam(q.paramValue()));
        }
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> VectorStorage.fromParam("disk"));
        assertEquals(
                "hnsw index: parameter 'vectors' expected heap or offheap, got 'disk'",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Quantization.fromParam("int4"));
        assertEquals(
                "hnsw index: parameter 'quantization' expected none or int8, got 'int4'",
                e.getMessage());
    }
}
