package dev.nepenthe.cluster;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

/**
 * The cluster sits on top: the store and the server never reach into it (a single node runs without
 * it, and the server knows replicas only through its {@code Replication} seam), and it uses the
 * store's public API, never the store's internals.
 */
class ClusterArchitectureTest {

    private static JavaClasses everything() {
        JavaClasses classes =
                new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("dev.nepenthe");
        // Without these an import that found nothing would pass every rule.
        assertTrue(
                classes.contain("dev.nepenthe.cluster.internal.NodeStateMachine"),
                "the cluster's classes were not imported");
        assertTrue(
                classes.contain("dev.nepenthe.core.Nepenthe"),
                "store-core's classes were not imported");
        assertTrue(
                classes.contain("dev.nepenthe.server.grpc.NepentheServer"),
                "store-server's classes were not imported");
        return classes;
    }

    @Test
    void neitherTheStoreNorTheServerDependsOnTheCluster() {
        ArchRule rule =
                noClasses()
                        .that()
                        .resideInAnyPackage("dev.nepenthe.core..", "dev.nepenthe.server..")
                        .should()
                        .dependOnClassesThat()
                        .resideInAPackage("dev.nepenthe.cluster..");
        rule.check(everything());
    }

    @Test
    void theClusterUsesOnlyTheStoresPublicApi() {
        ArchRule rule =
                noClasses()
                        .that()
                        .resideInAPackage("dev.nepenthe.cluster..")
                        .should()
                        .dependOnClassesThat(
                                resideInAPackage("dev.nepenthe.core.internal..")
                                        .and(
                                                not(
                                                        resideInAPackage(
                                                                "dev.nepenthe.core.internal.io"))));
        rule.check(everything());
    }
}
