package dev.nepenthe.ivfpq;

import dev.nepenthe.testing.index.VectorIndexContract;
import java.util.Map;

/**
 * IVF-PQ keeps the index contract with 8 lists of which every query probes all, 4-bit codes and an
 * exact re-rank of 64 candidates: it trains (at 200 vectors) during the tests, so both its flat
 * start and its trained state are exercised.
 */
class IvfPqIndexContractTest extends VectorIndexContract {

    @Override
    protected String kind() {
        return "ivfpq";
    }

    @Override
    protected Map<String, String> params() {
        return Map.of(
                "nlist",
                "8",
                "m",
                "4",
                "nbits",
                "4",
                "trainSize",
                "200",
                "nprobe",
                "8",
                "rerank",
                "64");
    }

    @Override
    protected double minRecall() {
        return 0.9;
    }
}
