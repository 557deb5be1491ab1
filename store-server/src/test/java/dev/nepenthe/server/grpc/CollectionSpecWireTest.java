package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A collection's spec crosses the wire whole, its declared subject identifiers included. */
class CollectionSpecWireTest {

    @Test
    void subjectIdentifiersAndEveryOtherFieldSurviveTheRoundTrip() {
        CollectionSpec spec =
                CollectionSpec.of("people", 8, Metric.DOT)
                        .withTextIndex("english")
                        .withProvenance(CollectionSpec.Provenance.REGENERATE)
                        .withSubjectIdentifiers("name", "email");
        dev.nepenthe.grpc.v1.CollectionSpec wire = Protos.spec(spec);
        assertEquals(List.of("name", "email"), wire.getSubjectIdentifiersList());
        assertEquals(spec, Protos.spec(wire));
    }

    @Test
    void aRepeatedIdentifierKeyIsRefusedAsTheStoreRefusesIt() {
        dev.nepenthe.grpc.v1.CollectionSpec wire =
                Protos.spec(CollectionSpec.of("people", 8, Metric.DOT)).toBuilder()
                        .addSubjectIdentifiers("email")
                        .addSubjectIdentifiers("email")
                        .build();
        assertThrows(IllegalArgumentException.class, () -> Protos.spec(wire));
    }
}
