package dev.nepenthe.core.internal.index;

import dev.nepenthe.core.index.VectorIndexFactory;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/** Finds index factories on the class path by kind. */
public final class VectorIndexes {
    private VectorIndexes() {}

    /** Every factory visible to this class loader, by kind. */
    public static Map<String, VectorIndexFactory> available() {
        Map<String, VectorIndexFactory> byKind = new TreeMap<>();
        for (VectorIndexFactory f : ServiceLoader.load(VectorIndexFactory.class)) {
            byKind.putIfAbsent(f.kind(), f);
        }
        return byKind;
    }

    /**
     * The factory for {@code kind}.
     *
     * @throws IllegalArgumentException naming the kinds that are available
     */
    public static VectorIndexFactory factory(String kind) {
        Map<String, VectorIndexFactory> all = available();
        VectorIndexFactory f = all.get(kind);
        if (f == null) {
            throw new IllegalArgumentException(
                    "index kind: expected one of "
                            + all.keySet()
                            + ", got '"
                            + kind
                            + "' (is the module that provides it on the class path?)");
        }
        return f;
    }
}
