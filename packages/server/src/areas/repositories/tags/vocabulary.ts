/**
 * The tags the hub knows, by type, for models and datasets: what
 * `huggingface_hub`'s get_model_tags and get_dataset_tags list, and the
 * vocabulary card metadata is read against. Ids are what a card's metadata
 * and a listing filter use.
 */

/** One known tag: its id, a label for people, its type and, for tasks, the kind of data. */
export interface KnownTag {
  id: string;
  label: string;
  type: string;
  subType?: string;
}

const TASKS: Array<[id: string, label: string, subType: string]> = [
  ["text-generation", "Text Generation", "nlp"],
  ["text2text-generation", "Text2Text Generation", "nlp"],
  ["text-classification", "Text Classification", "nlp"],
  ["token-classification", "Token Classification", "nlp"],
  ["question-answering", "Question Answering", "nlp"],
  ["zero-shot-classification", "Zero-Shot Classification", "nlp"],
  ["summarization", "Summarization", "nlp"],
  ["translation", "Translation", "nlp"],
  ["fill-mask", "Fill-Mask", "nlp"],
  ["feature-extraction", "Feature Extraction", "multimodal"],
  ["sentence-similarity", "Sentence Similarity", "nlp"],
  ["table-question-answering", "Table Question Answering", "nlp"],
  ["image-classification", "Image Classification", "cv"],
  ["object-detection", "Object Detection", "cv"],
  ["image-segmentation", "Image Segmentation", "cv"],
  ["depth-estimation", "Depth Estimation", "cv"],
  ["image-to-image", "Image-to-Image", "cv"],
  ["zero-shot-image-classification", "Zero-Shot Image Classification", "cv"],
  ["video-classification", "Video Classification", "cv"],
  ["text-to-image", "Text-to-Image", "multimodal"],
  ["image-to-text", "Image-to-Text", "multimodal"],
  ["image-text-to-text", "Image-Text-to-Text", "multimodal"],
  ["visual-question-answering", "Visual Question Answering", "multimodal"],
  ["text-to-video", "Text-to-Video", "multimodal"],
  ["any-to-any", "Any-to-Any", "multimodal"],
  ["automatic-speech-recognition", "Automatic Speech Recognition", "audio"],
  ["text-to-speech", "Text-to-Speech", "audio"],
  ["audio-classification", "Audio Classification", "audio"],
  ["audio-to-audio", "Audio-to-Audio", "audio"],
  ["tabular-classification", "Tabular Classification", "tabular"],
  ["tabular-regression", "Tabular Regression", "tabular"],
  ["time-series-forecasting", "Time Series Forecasting", "tabular"],
  ["reinforcement-learning", "Reinforcement Learning", "rl"],
  ["robotics", "Robotics", "rl"],
];

const LIBRARIES: Array<[id: string, label: string]> = [
  ["transformers", "Transformers"],
  ["diffusers", "Diffusers"],
  ["sentence-transformers", "sentence-transformers"],
  ["peft", "PEFT"],
  ["timm", "timm"],
  ["safetensors", "Safetensors"],
  ["gguf", "GGUF"],
  ["onnx", "ONNX"],
  ["pytorch", "PyTorch"],
  ["tensorflow", "TensorFlow"],
  ["jax", "JAX"],
  ["keras", "Keras"],
  ["mlx", "MLX"],
  ["transformers.js", "Transformers.js"],
  ["scikit-learn", "Scikit-learn"],
  ["spacy", "spaCy"],
  ["fastai", "fastai"],
  ["open_clip", "OpenCLIP"],
];

const LICENSES = [
  "apache-2.0",
  "mit",
  "bsd-2-clause",
  "bsd-3-clause",
  "gpl-3.0",
  "lgpl-3.0",
  "agpl-3.0",
  "mpl-2.0",
  "cc0-1.0",
  "cc-by-4.0",
  "cc-by-sa-4.0",
  "cc-by-nc-4.0",
  "cc-by-nc-sa-4.0",
  "cc-by-nd-4.0",
  "openrail",
  "openrail++",
  "creativeml-openrail-m",
  "bigscience-openrail-m",
  "llama2",
  "llama3",
  "llama3.1",
  "gemma",
  "odc-by",
  "unlicense",
  "other",
];

const LANGUAGES: Array<[code: string, label: string]> = [
  ["en", "English"],
  ["zh", "Chinese"],
  ["es", "Spanish"],
  ["fr", "French"],
  ["de", "German"],
  ["pt", "Portuguese"],
  ["it", "Italian"],
  ["nl", "Dutch"],
  ["ru", "Russian"],
  ["ja", "Japanese"],
  ["ko", "Korean"],
  ["ar", "Arabic"],
  ["hi", "Hindi"],
  ["tr", "Turkish"],
  ["pl", "Polish"],
  ["vi", "Vietnamese"],
  ["id", "Indonesian"],
  ["sv", "Swedish"],
  ["uk", "Ukrainian"],
  ["multilingual", "Multilingual"],
];

const SIZES = [
  "n<1K",
  "1K<n<10K",
  "10K<n<100K",
  "100K<n<1M",
  "1M<n<10M",
  "10M<n<100M",
  "100M<n<1B",
  "1B<n<10B",
  "10B<n<100B",
  "100B<n<1T",
  "n>1T",
];

const MODALITIES = [
  "text",
  "image",
  "audio",
  "video",
  "tabular",
  "timeseries",
  "3d",
  "geospatial",
  "document",
];
const FORMATS = [
  "json",
  "csv",
  "parquet",
  "arrow",
  "text",
  "imagefolder",
  "audiofolder",
  "webdataset",
  "optimized-parquet",
];

const prefixed = (type: string, values: string[]): KnownTag[] =>
  values.map((value) => ({ id: `${type}:${value}`, label: value, type }));
const languages = (type: string): KnownTag[] =>
  LANGUAGES.map(([code, label]) => ({ id: type === "language" ? code : `${type}:${code}`, label, type }));

/** The tags a model's card and listings know, by type. */
export const MODEL_TAGS: Record<string, KnownTag[]> = {
  pipeline_tag: TASKS.map(([id, label, subType]) => ({ id, label, type: "pipeline_tag", subType })),
  library: LIBRARIES.map(([id, label]) => ({ id, label, type: "library" })),
  license: prefixed("license", LICENSES),
  language: languages("language"),
};

/** The tags a dataset's card and listings know, by type. */
export const DATASET_TAGS: Record<string, KnownTag[]> = {
  task_categories: TASKS.map(([id, label, subType]) => ({
    id: `task_categories:${id}`,
    label,
    type: "task_categories",
    subType,
  })),
  size_categories: prefixed("size_categories", SIZES),
  modality: prefixed("modality", MODALITIES),
  format: prefixed("format", FORMATS),
  license: prefixed("license", LICENSES),
  language: languages("language"),
};
