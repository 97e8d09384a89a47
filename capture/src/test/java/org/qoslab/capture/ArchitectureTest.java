package org.qoslab.capture;

import static com.tngtech.archunit.base.DescribedPredicate.describe;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.regex.Pattern;

/**
 * Package rules of the capture module (capture/README.md, "Package rules"). The module is one
 * package, so the rules name its classes in four layers: the pure decoding and JRMP matching core,
 * the summary that aggregates it, the packet sources (files, dumpcap, pcap4j), the CLI.
 */
@AnalyzeClasses(packages = "org.qoslab.capture", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {
    static final String P = "org.qoslab.capture.";
    /** Frame decoding, classification, JRMP and GIOP call matching: bytes in, fields and records out. */
    static final DescribedPredicate<JavaClass> CORE = named("the decoding and matching core",
            "Classifier|FrameDecoder|FlowTable|FragmentTable|TrafficClass|IpText"
            + "|CallMatcher|CallVerdict|JrmpConnection|JrmpParser|JrmpSequencer|GiopMatcher|GiopStream|NiodevMatcher|NiodevStream|TcpMatcher|TcpDirection|CallLimitException");
    /** Aggregation of classified packets into summary.json and timeseries.csv. */
    static final DescribedPredicate<JavaClass> SUMMARY = named("the summary", "Summary|TimeSeries|PacketSink");
    /** Where packets come from: the pcap/pcapng reader, the dumpcap and pcap4j live engines. */
    static final DescribedPredicate<JavaClass> SOURCES = named("the packet sources",
            "PcapFileReader|Pcap4jReaders|LiveCapture|CaptureFormatException");
    /** The commands: picocli's Main and the driver of {@code classify} over many files (its options, its progress lines). */
    static final DescribedPredicate<JavaClass> CLI = named("the CLI", "Main|Batch");

    static DescribedPredicate<JavaClass> named(String what, String simpleNames) {
        Pattern p = Pattern.compile(Pattern.quote(P) + "(" + simpleNames + ")(\\$.*)?");
        // an array of a class (an enum's values()) counts as the class
        return describe(what, c -> p.matcher((c.isArray() ? c.getBaseComponentType() : c).getName()).matches());
    }

    /** The core is pure: the JDK's language and collections, a ByteBuffer, address literals; nothing else. */
    @ArchTest
    static final ArchRule core_is_pure = classes().that(CORE).should().onlyDependOnClassesThat(
            resideInAnyPackage("java.lang", "java.util..").or(CORE)
                    .or(belongToAnyOf(ByteBuffer.class, InetAddress.class, UnknownHostException.class)))
            .because("the classifier and the call matcher are tested on crafted bytes and shared by every "
                    + "source: no pcap4j, no file or socket I/O, no CLI");

    /** pcap4j (libpcap through JNA) is touched only by the pcap4j live engine and its bench readers. */
    @ArchTest
    static final ArchRule pcap4j_only_in_the_live_engine = noClasses().that(describe("are not the pcap4j engine",
                    (JavaClass c) -> !named("", "LiveCapture|Pcap4jReaders").test(c)))
            .should().dependOnClassesThat().resideInAnyPackage("org.pcap4j..")
            .because("the offline reader and dumpcap engine must work without libpcap in the JVM");

    /** picocli is the CLI's alone. */
    @ArchTest
    static final ArchRule picocli_only_in_the_cli = noClasses().that(describe("are not the CLI", (JavaClass c) -> !CLI.test(c)))
            .should().dependOnClassesThat().resideInAnyPackage("picocli..")
            .because("everything below the CLI is called from tests and other code with plain arguments");

    /** Layers: each may use the ones below it, never one above. */
    @ArchTest
    static final ArchRule layers = layeredArchitecture().consideringOnlyDependenciesInLayers()
            .layer("Core").definedBy(CORE)
            .layer("Summary").definedBy(SUMMARY)
            .layer("Sources").definedBy(SOURCES)
            .layer("Cli").definedBy(CLI)
            .whereLayer("Cli").mayNotBeAccessedByAnyLayer()
            .whereLayer("Sources").mayOnlyBeAccessedByLayers("Cli")
            .whereLayer("Summary").mayOnlyBeAccessedByLayers("Sources", "Cli")
            .whereLayer("Core").mayOnlyBeAccessedByLayers("Summary", "Sources", "Cli");

    /** Every class of the module is in one of the layers (a new class must be placed in the rules). */
    @ArchTest
    static final ArchRule every_class_is_in_a_layer = classes().should(
            com.tngtech.archunit.lang.conditions.ArchConditions.be(CORE.or(SUMMARY).or(SOURCES).or(CLI)));

    /** The capture depends on java-common only, never on the workload or the analysis. */
    @ArchTest
    static final ArchRule no_other_tool = noClasses().should().dependOnClassesThat()
            .resideInAnyPackage("org.qoslab.workload..", "org.qoslab.analysis..");
}
